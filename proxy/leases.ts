/**
 * Leader-election records the controller wrote, so that a crashed controller's successor does not
 * wait out its predecessor's lease: a new candidate waits a full lease duration (15 s in
 * controller-runtime) unless the Lease is missing, so once the old process is gone the coordinator
 * deletes every Lease the controller wrote (and clears the leader annotation of ConfigMap/Endpoints
 * records of the older leader election).
 */
import { formatApiPath } from '../src/model/api-path.js';
import { LEADER_ANNOTATION, isLeaderElectionRecord } from '../src/model/bookkeeping.js';
import type { ObjectKey } from '../src/model/object-key.js';
import { parseKey } from '../src/model/object-key.js';
import type { ResourceRef } from '../src/model/trace.js';

export interface LeaderRecord {
  key: ObjectKey;
  /** API path of the object (no subresource). */
  path: string;
  /** `lease`: delete it; `annotation`: clear the leader annotation. */
  form: 'lease' | 'annotation';
}

export class LeaderRecords {
  private readonly records = new Map<ObjectKey, LeaderRecord>();

  /** Notes a successful controller write; keeps it if it wrote a leader-election record. */
  noteWrite(key: ObjectKey, resource: ResourceRef | undefined, body: unknown): void {
    if (!resource || this.records.has(key)) return;
    const isLease = resource.group === 'coordination.k8s.io' && resource.resource === 'leases';
    const isAnnotated =
      !isLease && (resource.resource === 'configmaps' || resource.resource === 'endpoints') && resource.group === '' && isLeaderElectionRecord(body);
    if (!isLease && !isAnnotated) return;
    const parts = parseKey(key);
    if (!parts) return;
    const path = formatApiPath({
      group: resource.group,
      version: resource.version,
      resource: resource.resource,
      ...(parts.namespace ? { namespace: parts.namespace } : {}),
      name: parts.name,
    });
    this.records.set(key, { key, path, form: isLease ? 'lease' : 'annotation' });
  }

  all(): LeaderRecord[] {
    return [...this.records.values()];
  }
}

export function releaseRequest(record: LeaderRecord): { method: string; path: string; body?: unknown; contentType?: string } {
  if (record.form === 'lease') return { method: 'DELETE', path: record.path };
  return {
    method: 'PATCH',
    path: record.path,
    body: { metadata: { annotations: { [LEADER_ANNOTATION]: null } } },
    contentType: 'application/merge-patch+json',
  };
}
