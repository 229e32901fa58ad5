/** Hand-built run artifacts for oracle tests. */
import { keyOf, type KubeObject } from '../../src/model/object-key.js';
import type { RunArtifacts } from '../../src/model/results.js';
import type { ClusterChangeEvent } from '../../src/model/trace.js';

let rv = 1000;
let uid = 1;

/** A run whose end state holds `objects`, each given a fresh uid, resourceVersion and timestamps. */
export function runWith(objects: KubeObject[], changes: Array<['ADDED' | 'DELETED' | 'MODIFIED', KubeObject]> = []): RunArtifacts {
  const endState: RunArtifacts['endState'] = {};
  for (const o of objects) {
    const obj = structuredClone(o);
    obj.metadata = { uid: `uid-${uid++}`, resourceVersion: String(rv++), creationTimestamp: `2024-05-0${(uid % 9) + 1}T10:00:00Z`, ...obj.metadata };
    endState[keyOf(obj)!] = obj;
  }
  const clusterChanges: ClusterChangeEvent[] = changes.map(([eventType, object], i) => ({
    type: 'cluster-change',
    seq: i + 1,
    ts: 0,
    eventType,
    key: keyOf(object)!,
    resourceVersion: String(rv++),
    object,
  }));
  return { endState, clusterChanges };
}

export function configMap(name: string, data: Record<string, string>, extra: Partial<KubeObject> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data, ...extra };
}

export function secret(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'aGFzaA==' } };
}
