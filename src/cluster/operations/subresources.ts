/**
 * The subresources that are not a plain update: scale (a Scale view onto the kind's replica paths),
 * pods/binding (the scheduler's write) and pods/eviction (a delete a PodDisruptionBudget may refuse).
 */
import { cloneJson } from '../../model/json-value.js';
import { asLabelSelector, formatLabelSelector, matchesLabelSelector } from '../../model/label-selector.js';
import { isObject, type KubeObject } from '../../model/object-key.js';
import { ApiError, badRequest, conflict, internalError, invalid, tooManyRequests, unsupportedMediaType, type MetaStatus } from '../api-error.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, patchTypeOf } from '../patch.js';
import { groupResourceOf, storageKey } from '../registry.js';
import { parseDeleteOptionsBody } from './deletion.js';
import {
  type Scope,
  type WriteOptions,
  type Result,
  nowTimestamp,
  present,
  readPath,
  writePath,
  parsePatchBody,
  setCondition,
  type OperationsCore,
} from './support.js';

// ---- scale subresource ----

export function getScale(core: OperationsCore, scope: Scope, name: string): Result {
  return { code: 200, body: scaleOf(core, scope, core.stored(scope, name)) };
}

export function updateScale(core: OperationsCore, scope: Scope, name: string, body: unknown, options: WriteOptions = {}): Result {
  const old = core.stored(scope, name);
  return commitScale(core, scope, old, body, options);
}

export function patchScale(core: OperationsCore, scope: Scope, name: string, contentType: string, rawBody: string, options: WriteOptions = {}): Result {
  const old = core.stored(scope, name);
  const type = patchTypeOf(contentType);
  if (type === undefined || type === 'apply') {
    throw unsupportedMediaType(contentType, ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);
  }
  const patch = parsePatchBody(rawBody, type);
  const current = scaleOf(core, scope, old);
  const patched =
    type === 'json' ? applyJsonPatch(current, patch) : type === 'merge' ? applyMergePatch(current, patch) : applyStrategicMergePatch(current, patch, {});
  return commitScale(core, scope, old, patched, options);
}

function scaleOf(core: OperationsCore, scope: Scope, obj: KubeObject): KubeObject {
  const paths = scope.def.scale!;
  const view = present(scope.def, scope.version, obj);
  const meta = obj.metadata!;
  const selectorValue = paths.labelSelectorPath ? readPath(view, paths.labelSelectorPath) : undefined;
  const selector = typeof selectorValue === 'string' ? selectorValue : formatLabelSelector(asLabelSelector(selectorValue));
  const status: Record<string, unknown> = { replicas: Number(readPath(view, paths.statusReplicasPath) ?? 0) };
  if (selector) status.selector = selector;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: meta.name,
      ...(meta.namespace ? { namespace: meta.namespace } : {}),
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      creationTimestamp: meta.creationTimestamp,
    },
    spec: { replicas: Number(readPath(view, paths.specReplicasPath) ?? 0) },
    status,
  };
}

function commitScale(core: OperationsCore, scope: Scope, old: KubeObject, body: unknown, options: WriteOptions): Result {
  const { def } = scope;
  const name = old.metadata!.name!;
  if (!isObject(body)) throw badRequest('the object provided is unrecognized (must be of type Scale): the body is not a JSON object');
  const meta = isObject(body.metadata) ? body.metadata : {};
  if (meta.name !== undefined && meta.name !== name)
    throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
  const replicas = isObject(body.spec) ? body.spec.replicas : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid('Scale', 'autoscaling', name, [
      { type: 'Invalid', field: 'spec.replicas', value: replicas ?? null, detail: 'must be greater than or equal to 0' },
    ]);
  }
  const rv = typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '' ? meta.resourceVersion : undefined;
  if (rv !== undefined && rv !== old.metadata!.resourceVersion) throw conflict(groupResourceOf(def), name);
  const next = cloneJson(present(def, scope.version, old));
  writePath(next, def.scale!.specReplicasPath, replicas);
  const incoming = core.decode(scope, next);
  core.decodeCustom(scope, incoming, scope.version, { fieldValidation: 'Ignore' });
  const result = core.commitUpdate(scope, old, incoming, 'main', options, undefined, 'scale');
  return { code: result.code, body: scaleOf(core, scope, core.stored(scope, name)) };
}

// ---- pods/binding and pods/eviction ----

/** POST pods/{name}/binding: assigns the pod to a node (the scheduler's write). */
export function bind(core: OperationsCore, scope: Scope, name: string, body: unknown, options: WriteOptions = {}): Result {
  if (!isObject(body)) throw badRequest('the object provided is unrecognized (must be of type Binding): the body is not a JSON object');
  const meta = isObject(body.metadata) ? body.metadata : {};
  if (meta.name !== undefined && meta.name !== name) throw badRequest('name in URL does not match name in Binding object');
  const target = isObject(body.target) ? body.target : {};
  if (typeof target.name !== 'string' || target.name === '') {
    throw invalid('Binding', '', name, [{ type: 'Required', field: 'target.name', detail: '' }]);
  }
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') {
    throw invalid('Binding', '', name, [{ type: 'NotSupported', field: 'target.kind', value: target.kind, detail: 'supported values: "Node", ""' }]);
  }
  const pod = core.stored(scope, name);
  const podMeta = pod.metadata!;
  const refuse = (why: string): ApiError => conflict({ group: '', resource: 'pods/binding' }, name, why);
  if (typeof meta.uid === 'string' && meta.uid !== '' && meta.uid !== podMeta.uid)
    throw refuse(`Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${podMeta.uid ?? ''}`);
  if (podMeta.deletionTimestamp) throw refuse(`pod ${name} is being deleted, cannot be assigned to a host`);
  const spec = isObject(pod.spec) ? pod.spec : {};
  if (typeof spec.nodeName === 'string' && spec.nodeName !== '') throw refuse(`pod ${name} is already assigned to node "${spec.nodeName}"`);
  if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0) throw refuse(`pod ${name} has non-empty .spec.schedulingGates`);
  const annotations = isObject(meta.annotations) ? (meta.annotations as Record<string, string>) : {};
  const bound = cloneJson(pod);
  (bound.spec as Record<string, unknown>).nodeName = target.name;
  if (Object.keys(annotations).length > 0) bound.metadata!.annotations = { ...(bound.metadata!.annotations ?? {}), ...annotations };
  setCondition(bound, { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: nowTimestamp() });
  core.commitUpdate(scope, pod, bound, 'system', options, undefined, 'binding');
  return { code: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as MetaStatus };
}

/** POST pods/{name}/eviction: deletes the pod unless a PodDisruptionBudget forbids it (429). */
export function evict(core: OperationsCore, scope: Scope, name: string, body: unknown): Result {
  if (!isObject(body)) throw badRequest('the object provided is unrecognized (must be of type Eviction): the body is not a JSON object');
  const meta = isObject(body.metadata) ? body.metadata : {};
  if (meta.name !== undefined && meta.name !== name) throw badRequest('name in URL does not match name in Eviction object');
  const pod = core.stored(scope, name);
  const deleteOptions = isObject(body.deleteOptions) ? parseDeleteOptionsBody(body.deleteOptions) : {};
  const status = isObject(pod.status) ? pod.status : {};
  const terminal = status.phase === 'Succeeded' || status.phase === 'Failed' || status.phase === 'Pending';
  const pdbDef = core.registry.get({ group: 'policy', resource: 'poddisruptionbudgets' });
  if (!terminal && !pod.metadata?.deletionTimestamp && pdbDef) {
    const pdbs = core.store
      .list(storageKey(pdbDef), scope.namespace)
      .filter((p) => matchesLabelSelector(asLabelSelector(isObject(p.spec) ? p.spec.selector : undefined), pod.metadata?.labels));
    if (pdbs.length > 1) throw internalError('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    const pdb = pdbs[0];
    if (pdb) {
      const pdbStatus = isObject(pdb.status) ? pdb.status : {};
      const allowed = typeof pdbStatus.disruptionsAllowed === 'number' ? pdbStatus.disruptionsAllowed : 0;
      const observed = typeof pdbStatus.observedGeneration === 'number' ? pdbStatus.observedGeneration : 0;
      if (observed < (pdb.metadata?.generation ?? 0)) {
        throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", [
          { reason: 'DisruptionBudget', message: `The disruption budget ${pdb.metadata!.name} is still being processed by the server.` },
        ]);
      }
      if (allowed <= 0) {
        throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", [
          {
            reason: 'DisruptionBudget',
            message: `The disruption budget ${pdb.metadata!.name} needs ${String(pdbStatus.desiredHealthy ?? 0)} healthy pods and has ${String(pdbStatus.currentHealthy ?? 0)} currently`,
          },
        ]);
      }
      if (!deleteOptions.dryRun) {
        core.systemUpdate(
          pdbDef,
          pdb,
          (p) => {
            const s = p.status as Record<string, unknown>;
            s.disruptionsAllowed = allowed - 1;
            s.disruptedPods = { ...(isObject(s.disruptedPods) ? s.disruptedPods : {}), [name]: nowTimestamp() };
          },
          'kube-apiserver',
          'status',
        );
      }
    }
  }
  // As kube-apiserver does since PodDisruptionConditions (GA in 1.31): the pod says why it goes.
  if (!deleteOptions.dryRun && status.phase !== 'Succeeded' && status.phase !== 'Failed' && !pod.metadata?.deletionTimestamp) {
    core.systemUpdate(
      scope.def,
      pod,
      (p) =>
        setCondition(p, {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'EvictionByEvictionAPI',
          message: 'Eviction API: evicting',
          lastTransitionTime: nowTimestamp(),
        }),
      'kube-apiserver',
      'status',
    );
  }
  core.delete(scope, name, deleteOptions);
  return { code: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as MetaStatus };
}
