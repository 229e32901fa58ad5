/**
 * Reconstructing, from a run's traces, for every object: the sequence of states the cluster went
 * through (cluster trace: kperturb's own watch) and the sequence of states the controller was shown
 * (controller trace: list and get answers, watch events, the answers to its own writes). Pure; feed it
 * both traces of a run (any order: events are sorted by `seq`, which the two traces share).
 *
 * A state of `undefined` means "absent": deleted in the cluster; for the controller, a DELETED watch
 * event, or a list that no longer contained an object the same controller incarnation had been shown
 * (only for lists without label/field selectors, whose scope is known). Each controller incarnation
 * starts with an empty cache, so `shown` entries carry their incarnation.
 */
import type { KubeObject, ObjectKey } from './object-key.js';
import { isObject, keyOf, parseKey } from './object-key.js';
import type { RequestEvent, TraceEvent, WatchEventType } from './trace.js';

export interface ClusterState {
  seq: number;
  resourceVersion: string;
  /** Undefined: the object was deleted (then `last` is its final state). */
  state: KubeObject | undefined;
  last?: KubeObject;
}

export interface ShownState {
  seq: number;
  /** How the controller was shown it. */
  via: 'list' | 'get' | 'watch' | 'write';
  /** The controller request (list/get/write) or watch stream it came on. */
  requestId: number;
  incarnation: number;
  resourceVersion?: string;
  eventType?: WatchEventType;
  /** Undefined: shown as absent (DELETED event, or missing from a later list). */
  state: KubeObject | undefined;
}

export interface ObjectHistory {
  key: ObjectKey;
  cluster: ClusterState[];
  shown: ShownState[];
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete']);

export function reconstructHistories(trace: Iterable<TraceEvent>): Map<ObjectKey, ObjectHistory> {
  const events = [...trace].sort((a, b) => a.seq - b.seq);
  const histories = new Map<ObjectKey, ObjectHistory>();
  const historyOf = (key: ObjectKey): ObjectHistory => {
    let h = histories.get(key);
    if (!h) {
      h = { key, cluster: [], shown: [] };
      histories.set(key, h);
    }
    return h;
  };
  const requests = new Map<number, RequestEvent>();
  /** Keys each incarnation currently believes present (for absences in later lists). */
  const present = new Map<number, Set<ObjectKey>>();
  const presentIn = (inc: number) => {
    let s = present.get(inc);
    if (!s) present.set(inc, (s = new Set()));
    return s;
  };
  const show = (key: ObjectKey, entry: ShownState) => {
    historyOf(key).shown.push(entry);
    if (entry.state) presentIn(entry.incarnation).add(key);
    else presentIn(entry.incarnation).delete(key);
  };

  for (const e of events) {
    switch (e.type) {
      case 'cluster-change':
        historyOf(e.key).cluster.push(
          e.eventType === 'DELETED'
            ? { seq: e.seq, resourceVersion: e.resourceVersion, state: undefined, last: e.object }
            : { seq: e.seq, resourceVersion: e.resourceVersion, state: e.object },
        );
        break;
      case 'request':
        requests.set(e.id, e);
        break;
      case 'response': {
        const req = requests.get(e.id);
        if (!req || e.status < 200 || e.status >= 300 || !e.object || e.object.kind === 'Status') break;
        const base = { seq: e.seq, requestId: e.id, incarnation: req.incarnation };
        if (req.verb === 'list') {
          const items = Array.isArray(e.object.items) ? (e.object.items as unknown[]) : [];
          const listed = new Set<ObjectKey>();
          for (const item of items) {
            if (!isObject(item)) continue;
            const key = keyOf(item as KubeObject, req.resource?.kind);
            if (!key) continue;
            listed.add(key);
            show(key, { ...base, via: 'list', resourceVersion: (item as KubeObject).metadata?.resourceVersion ?? '', state: item as KubeObject });
          }
          if (req.resource?.kind && !req.query.labelSelector && !req.query.fieldSelector) {
            const namespace = namespaceOfPath(req.path);
            for (const key of [...presentIn(req.incarnation)]) {
              const parts = parseKey(key);
              if (!parts || parts.kind !== req.resource.kind || listed.has(key)) continue;
              if (namespace !== undefined && parts.namespace !== namespace) continue;
              show(key, { ...base, via: 'list', state: undefined });
            }
          }
        } else if (req.verb === 'get' || WRITE_VERBS.has(req.verb)) {
          const key = keyOf(e.object, req.resource?.kind);
          if (!key || req.resource?.subresource === 'scale') break;
          show(key, { ...base, via: req.verb === 'get' ? 'get' : 'write', resourceVersion: e.object.metadata?.resourceVersion ?? '', state: e.object });
        }
        break;
      }
      case 'watch-event': {
        if (!e.key || (e.eventType !== 'ADDED' && e.eventType !== 'MODIFIED' && e.eventType !== 'DELETED')) break;
        const req = requests.get(e.id);
        show(e.key, {
          seq: e.seq,
          via: 'watch',
          requestId: e.id,
          incarnation: req?.incarnation ?? 1,
          eventType: e.eventType,
          ...(e.resourceVersion !== undefined ? { resourceVersion: e.resourceVersion } : {}),
          state: e.eventType === 'DELETED' ? undefined : e.object,
        });
        break;
      }
      default:
        break;
    }
  }
  return histories;
}

function namespaceOfPath(path: string): string | undefined {
  const m = /\/namespaces\/([^/]+)\/[^/]+$/.exec(path);
  return m ? decodeURIComponent(m[1]!) : undefined;
}
