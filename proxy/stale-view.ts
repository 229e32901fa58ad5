/**
 * Stale views (time travel), within the API contract as far as a proxy can keep it.
 *
 * A restarted controller may be served by an API server whose watch cache lags (Kubernetes issue
 * 59848; Sieve's stale-state bugs): its initial list shows an older state, and its watch replays
 * history from there once the cache catches up. A `StaleView` does that for one controller epoch:
 * - LIST (resourceVersion "0" or unset, no continue token): forwarded upstream so status, headers and
 *   errors stay real, but the items are replaced by the cluster view's state at the frozen
 *   resourceVersion R0 (filtered by the request's namespace and selectors) and the list's
 *   resourceVersion becomes R0. (For "0" this is exactly what a lagging cache may do; for an unset
 *   resourceVersion, a consistent read, it goes beyond the contract, which client-node informers need
 *   because they never pass "0". The trace's fault event says which.)
 * - WATCH from R (a list's R0): the stream opens at once and stays silent until `release()`; then it
 *   continues from R on a real upstream watch, so the API server itself replays the history after R.
 *   A watch from "0"/unset first gets the state at R0 as synthetic ADDED events.
 * - WATCH with sendInitialEvents=true (WatchList): rejected with the 422 an API server without the
 *   WatchList feature gives, so the client falls back to LIST.
 * - Everything else (GETs, writes) is live: writes still go to the real server.
 * After `release()` new requests are served live. A view scoped to some kinds (`kinds`) serves only
 * their lists and watches frozen: kube-apiserver keeps one watch cache per resource, so one kind's
 * may lag while the others are current.
 */
import type { KubeObject, ObjectKey } from '../src/model/object-key.js';
import { getField } from '../src/model/fields.js';
import { matchesLabels, parseLabelSelector } from '../src/model/selectors.js';
import type { ClusterView } from '../src/recorder/cluster-recorder.js';
import type { RequestFacts } from './classify.js';
import { statusObject } from './status.js';
import { RetryLoopDetector } from '../src/model/retry-loop.js';

export const WATCH_LIST_FORBIDDEN_MESSAGE =
  'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled';

/** The exact answer of an API server without the WatchList feature to a sendInitialEvents watch. */
export function watchListForbidden(): KubeObject {
  return {
    ...statusObject(422, 'Invalid', WATCH_LIST_FORBIDDEN_MESSAGE),
    details: {
      group: 'meta.k8s.io',
      kind: 'ListOptions',
      causes: [
        {
          reason: 'FieldValueForbidden',
          message: 'Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
          field: 'sendInitialEvents',
        },
      ],
    },
  };
}

/** A loop found on a stale view: its round's length in requests, and whether it was churn. */
export interface RetryLoop {
  round: number;
  churn: boolean;
}

export class StaleView {
  private releasedFlag = false;
  private readonly waiting: Array<() => void> = [];
  private markServed: () => void = () => undefined;
  /**
   * Resolves when the view first answered a request: a release timer should start there, not at
   * the restart, so a slowly starting controller still gets the whole stale window.
   */
  readonly firstServed: Promise<void> = new Promise((resolve) => (this.markServed = resolve));

  private readonly kinds: ReadonlySet<string> | undefined;
  private readonly loop = new RetryLoopDetector();
  private markRetrying: (loop: RetryLoop) => void = () => undefined;
  /**
   * Resolves once the controller, on this view, has made the same round of reads and failed writes
   * RETRY_LOOP_ROUNDS times while the cluster did not change, or of such requests and writes that
   * the next round undoes (churn; src/model/retry-loop.ts): it is going round in a loop only the
   * present ends, and the view may be released.
   */
  readonly retrying: Promise<RetryLoop> = new Promise((resolve) => (this.markRetrying = resolve));

  constructor(
    /** The frozen resourceVersion R0. */
    readonly resourceVersion: string,
    private readonly view: ClusterView,
    /** The kinds served frozen; undefined: every kind. */
    kinds?: readonly string[],
  ) {
    this.kinds = kinds ? new Set(kinds) : undefined;
  }

  /** Does the view cover this request's resource? (A request of an unknown kind is live in a scoped view.) */
  private covers(f: RequestFacts): boolean {
    return this.kinds === undefined || (f.resource?.kind !== undefined && this.kinds.has(f.resource.kind));
  }

  get released(): boolean {
    return this.releasedFlag;
  }

  /** Ends the stale view: held watches continue from where they asked, new requests are live. */
  release(): void {
    if (this.releasedFlag) return;
    this.releasedFlag = true;
    for (const w of this.waiting.splice(0)) w();
  }

  /** The view answered a request (a list or a watch). */
  served(): void {
    this.markServed();
  }

  /**
   * A request of the view's controller (not a watch) was answered (`signature`: its verb and object;
   * `undoable`: a create of a named object or a delete, which the next round may repeat only if it
   * was undone in between).
   */
  answered(signature: string, status: number, write: boolean, undoable = false): void {
    if (this.releasedFlag) return;
    const inert = !write || status >= 400;
    const answered = { signature, status, inert, undoable, clusterRevision: this.view.latestResourceVersion() };
    if (this.loop.add(answered)) this.markRetrying({ round: this.loop.round!, churn: this.loop.churn });
  }

  /** Runs `resume` on release (at once if already released). */
  whenReleased(resume: () => void): void {
    if (this.releasedFlag) resume();
    else this.waiting.push(resume);
  }

  /** Is this LIST one the view answers? */
  appliesToList(f: RequestFacts): boolean {
    if (this.releasedFlag || f.verb !== 'list' || !f.resource || f.resource.subresource || !this.covers(f)) return false;
    const rv = f.query.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== '0') return false;
    if (f.query.continue) return false;
    return this.objectsFor(f) !== undefined;
  }

  /** Is this WATCH one the view holds? */
  appliesToWatch(f: RequestFacts): boolean {
    return !this.releasedFlag && f.verb === 'watch' && f.resource !== undefined && !f.resource.subresource && this.covers(f);
  }

  /** The objects the request selects in the frozen state, sorted as the API server lists them; undefined if unknown. */
  objectsFor(f: RequestFacts): KubeObject[] | undefined {
    const r = f.resource;
    if (!r) return undefined;
    const state = this.view.stateAt(r.group, r.resource, Number(this.resourceVersion));
    if (!state) return undefined;
    let labelReqs;
    try {
      labelReqs = parseLabelSelector(f.query.labelSelector);
    } catch {
      return undefined;
    }
    const fieldReqs = parseFieldSelector(f.query.fieldSelector);
    const namespace = f.apiPath?.namespace;
    const out: Array<[ObjectKey, KubeObject]> = [];
    for (const [key, obj] of state) {
      if (namespace !== undefined && obj.metadata?.namespace !== namespace) continue;
      if (!matchesLabels(labelReqs, obj.metadata?.labels)) continue;
      if (!fieldReqs.every((q) => (q.op === '=' ? fieldValue(obj, q.field) === q.value : fieldValue(obj, q.field) !== q.value))) continue;
      out.push([key, obj]);
    }
    out.sort(([, a], [, b]) => compareNamespacedName(a, b));
    return out.map(([, obj]) => obj);
  }

  /** The live list answer rewritten to the frozen state. */
  rewriteList(f: RequestFacts, live: KubeObject): KubeObject | undefined {
    const objects = this.objectsFor(f);
    if (!objects) return undefined;
    const liveItems = Array.isArray(live.items) ? (live.items as KubeObject[]) : [];
    // Mirror the live answer's item shape: built-in lists carry no kind/apiVersion per item.
    const itemsHaveKind = liveItems.length === 0 ? true : liveItems[0]!.kind !== undefined;
    // Copies: the answer is recorded, and a trace writer may redact Secret values in place.
    const items = objects.map((o) => {
      const copy = structuredClone(o);
      if (itemsHaveKind) return copy;
      const { kind: _k, apiVersion: _a, ...rest } = copy;
      return rest as KubeObject;
    });
    const metadata: Record<string, unknown> = { ...(live.metadata ?? {}), resourceVersion: this.resourceVersion };
    delete metadata.continue;
    delete metadata.remainingItemCount;
    return { ...live, metadata, items };
  }
}

interface FieldReq {
  field: string;
  op: '=' | '!=';
  value: string;
}

function parseFieldSelector(text: string | undefined): FieldReq[] {
  if (!text) return [];
  const out: FieldReq[] = [];
  for (const raw of text.split(',')) {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(raw);
    if (m) out.push({ field: m[1]!, op: m[2] === '!=' ? '!=' : '=', value: m[3]! });
  }
  return out;
}

function fieldValue(obj: KubeObject, field: string): string {
  if (field === 'metadata.namespace') return obj.metadata?.namespace ?? '';
  const v = getField(obj, field);
  return v === undefined || v === null ? '' : String(v);
}

function compareNamespacedName(a: KubeObject, b: KubeObject): number {
  const ka = `${a.metadata?.namespace ?? ''}/${a.metadata?.name ?? ''}`;
  const kb = `${b.metadata?.namespace ?? ''}/${b.metadata?.name ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
