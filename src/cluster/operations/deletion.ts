/**
 * Deletion: preconditions, graceful deletion (schedule, shorten or leave a pending one alone),
 * propagation policies as the garbage collector's finalizers, finalizers holding the object, and
 * delete-collection; and the DeleteOptions a request body carries.
 */
import { groupVersion } from '../../model/api-path.js';
import { cloneJson, jsonEqual } from '../../model/json-value.js';
import { isObject, type KubeObject } from '../../model/object-key.js';
import { ApiError, badRequest, conflict, invalid, successStatus } from '../api-error.js';
import { groupResourceOf, storageKey } from '../registry.js';
import {
  type Scope,
  type PropagationPolicy,
  type DeleteOptions,
  type ListOptions,
  type Result,
  ORPHAN_FINALIZER,
  FOREGROUND_FINALIZER,
  nowTimestamp,
  present,
  pendingFinalizers,
  parseSelection,
  selects,
  type OperationsCore,
} from './support.js';

export function deleteObject(core: OperationsCore, scope: Scope, name: string, options: DeleteOptions = {}): Result {
  const { def } = scope;
  const gr = groupResourceOf(def);
  const resource = storageKey(def);
  const old = core.stored(scope, name);
  const meta = old.metadata!;
  const pre = options.preconditions;
  if (pre?.uid && pre.uid !== meta.uid) {
    throw conflict(gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid ?? ''}`);
  }
  if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
    throw conflict(
      gr,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion ?? ''}`,
    );
  }
  const next = cloneJson(old);
  const nextMeta = next.metadata!;
  if (!meta.deletionTimestamp) def.strategy.prepareForDelete?.(next);
  let grace = options.gracePeriodSeconds;
  if (grace !== undefined && grace < 0) grace = 1;

  // Graceful deletion (rest.BeforeDelete): schedule, shorten, or leave a pending graceful deletion alone.
  let graceful = false;
  let pendingGraceful = false;
  if (def.strategy.gracefulDeletion) {
    if (meta.deletionTimestamp) {
      const current = meta.deletionGracePeriodSeconds;
      if (current !== undefined && current !== 0) {
        if (grace !== undefined && grace < current) {
          const scheduled = Date.parse(meta.deletionTimestamp) - current * 1000 + grace * 1000;
          nextMeta.deletionTimestamp = new Date(scheduled).toISOString().replace(/\.\d+Z$/, 'Z');
          nextMeta.deletionGracePeriodSeconds = grace;
          graceful = true;
        } else {
          pendingGraceful = true;
        }
      }
    } else {
      const period = def.strategy.gracefulDeletion(old, grace);
      nextMeta.deletionTimestamp = nowTimestamp(period);
      nextMeta.deletionGracePeriodSeconds = period;
      if ((nextMeta.generation ?? 0) > 0) nextMeta.generation = nextMeta.generation! + 1;
      graceful = true;
    }
  }
  const accepted = options.orphanDependents === false ? 202 : 200;
  if (pendingGraceful) return { code: accepted, body: present(def, scope.version, old) };

  // Propagation policy as finalizers (deletionFinalizersForGarbageCollection).
  const finalizers = gcFinalizers(nextMeta.finalizers ?? [], options);
  if (finalizers.length > 0) nextMeta.finalizers = finalizers;
  else delete nextMeta.finalizers;
  const pending = pendingFinalizers(def, next).length > 0;
  if (!graceful && pending) markAsDeleting(next);
  if (pending || (graceful && (nextMeta.deletionGracePeriodSeconds ?? 0) > 0)) {
    if (options.dryRun || jsonEqual(next, old)) return { code: accepted, body: present(def, scope.version, options.dryRun ? next : old) };
    const updated = core.store.update(resource, next, old);
    return { code: accepted, body: present(def, scope.version, updated) };
  }
  // Deleted now; a graceful kind (pods) records the zero-grace deletion first, as the real registry does.
  let last: KubeObject;
  if (options.dryRun) last = old;
  else if (graceful) last = core.store.delete(resource, core.store.update(resource, next, old));
  else last = core.store.delete(resource, old);
  if (def.strategy.returnDeletedObject) return { code: 200, body: present(def, scope.version, last) };
  const details: Record<string, string> = { name };
  if (def.group) details.group = def.group;
  details.kind = def.resource;
  details.uid = meta.uid ?? '';
  return { code: 200, body: successStatus(details) };
}

export function deleteObjects(core: OperationsCore, scope: Scope, list: ListOptions, options: DeleteOptions = {}): Result {
  const { def, version } = scope;
  const selection = parseSelection(def, list.labelSelector, list.fieldSelector);
  const targets = core.store.list(storageKey(def), def.namespaced ? scope.namespace : undefined).filter((o) => selects(selection, o));
  const items: KubeObject[] = [];
  for (const target of targets) {
    const targetScope: Scope = { def, version, namespace: target.metadata?.namespace };
    try {
      const { preconditions: _p, ...each } = options;
      const result = core.delete(targetScope, target.metadata!.name!, each);
      items.push(
        result.body.kind === 'Status'
          ? present(def, version, target, def.listItemsCarryTypeMeta)
          : present(def, version, result.body as KubeObject, def.listItemsCarryTypeMeta),
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
  const body: KubeObject = {
    kind: def.listKind,
    apiVersion: groupVersion(def.group, version),
    metadata: { resourceVersion: String(core.store.resourceVersion) },
    items,
  };
  return { code: 200, body };
}
/** DeleteOptions from a JSON object (a DELETE body, or an Eviction's deleteOptions). */
export function parseDeleteOptionsBody(body: Record<string, unknown>): DeleteOptions {
  const options: DeleteOptions = {};
  if (Array.isArray(body.dryRun)) {
    for (const v of body.dryRun) if (v !== 'All') throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`);
    if (body.dryRun.length > 0) options.dryRun = true;
  }
  if (isObject(body.preconditions)) {
    const pre = body.preconditions;
    options.preconditions = {};
    if (typeof pre.uid === 'string') options.preconditions.uid = pre.uid;
    if (typeof pre.resourceVersion === 'string') options.preconditions.resourceVersion = pre.resourceVersion;
  }
  if (body.gracePeriodSeconds !== undefined && body.gracePeriodSeconds !== null) {
    if (typeof body.gracePeriodSeconds !== 'number' || !Number.isInteger(body.gracePeriodSeconds)) throw badRequest('gracePeriodSeconds must be an integer');
    options.gracePeriodSeconds = body.gracePeriodSeconds;
  }
  if (body.propagationPolicy !== undefined && body.propagationPolicy !== null) options.propagationPolicy = checkPropagationPolicy(body.propagationPolicy);
  if (typeof body.orphanDependents === 'boolean') options.orphanDependents = body.orphanDependents;
  if (options.orphanDependents !== undefined && options.propagationPolicy !== undefined) {
    throw invalid('DeleteOptions', 'meta.k8s.io', '', [
      { type: 'Invalid', field: 'propagationPolicy', value: options.propagationPolicy, detail: 'orphanDependents and deletionPropagation cannot be both set' },
    ]);
  }
  return options;
}

export function checkPropagationPolicy(value: unknown): PropagationPolicy {
  if (value === 'Orphan' || value === 'Background' || value === 'Foreground') return value;
  throw invalid('DeleteOptions', 'meta.k8s.io', '', [
    { type: 'NotSupported', field: 'propagationPolicy', value, detail: 'supported values: "Foreground", "Background", "Orphan", "nil"' },
  ]);
}

/** The finalizers after a DELETE's propagation policy (generic registry deletionFinalizersForGarbageCollection). */
function gcFinalizers(current: readonly string[], options: DeleteOptions): string[] {
  let orphan: boolean;
  let foreground: boolean;
  if (options.orphanDependents !== undefined) {
    orphan = options.orphanDependents;
    foreground = false;
  } else if (options.propagationPolicy !== undefined) {
    orphan = options.propagationPolicy === 'Orphan';
    foreground = options.propagationPolicy === 'Foreground';
  } else {
    const first = current.find((f) => f === ORPHAN_FINALIZER || f === FOREGROUND_FINALIZER);
    orphan = first === ORPHAN_FINALIZER;
    foreground = first === FOREGROUND_FINALIZER;
  }
  const out = current.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
  if (orphan) out.push(ORPHAN_FINALIZER);
  if (foreground) out.push(FOREGROUND_FINALIZER);
  const same = out.length === current.length && out.every((f) => current.includes(f));
  return same ? [...current] : out;
}

/** markAsDeleting: deletionTimestamp now (kept if already set), grace 0, generation bumped once. */
function markAsDeleting(obj: KubeObject): void {
  const meta = obj.metadata!;
  if (!meta.deletionTimestamp && (meta.generation ?? 0) > 0) meta.generation = meta.generation! + 1;
  if (!meta.deletionTimestamp) meta.deletionTimestamp = nowTimestamp();
  meta.deletionGracePeriodSeconds = 0;
}
