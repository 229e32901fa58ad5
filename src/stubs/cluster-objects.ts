/**
 * The pods, Services and PersistentVolumeClaims of the cluster as the coordinator's cluster recorder
 * sees them, for the stub applications (the claims: whether an application's data volumes remain)
 * and the controller's cluster DNS: the recorder already lists and watches every resource for the
 * cluster trace, so they need no watches of their own. Replays the changes the recorder saw before
 * (its initial lists included), then follows new ones.
 */
import type { KubeObject, ObjectKey } from '../model/object-key.js';
import type { ClusterView } from '../recorder/cluster-recorder.js';

export type PodsAndServicesView = Pick<ClusterView, 'onChange' | 'pastChanges'>;

const TRACKED = { pods: 'Pod', services: 'Service', persistentvolumeclaims: 'PersistentVolumeClaim' } as const;

export interface TrackedChange {
  kind: (typeof TRACKED)[keyof typeof TRACKED];
  key: ObjectKey;
  /** Undefined: deleted. */
  object: KubeObject | undefined;
}

export class PodsAndServices {
  readonly pods = new Map<ObjectKey, KubeObject>();
  readonly services = new Map<ObjectKey, KubeObject>();
  readonly claims = new Map<ObjectKey, KubeObject>();
  private readonly unsubscribe: () => void;

  /** `onChange` hears every change after the replay; the replay itself only fills the maps. */
  constructor(
    view: PodsAndServicesView,
    private readonly onChange: (change: TrackedChange) => void,
  ) {
    for (const c of view.pastChanges()) this.apply(c.group, c.resource, c.key, c.next, false);
    this.unsubscribe = view.onChange((c) => this.apply(c.group, c.resource, c.key, c.next, true));
  }

  stop(): void {
    this.unsubscribe();
  }

  private apply(group: string, resource: string, key: ObjectKey, next: KubeObject | undefined, notify: boolean): void {
    if (group !== '' || !Object.hasOwn(TRACKED, resource)) return;
    const kind = TRACKED[resource as keyof typeof TRACKED];
    const map = kind === 'Pod' ? this.pods : kind === 'Service' ? this.services : this.claims;
    if (next) map.set(key, next);
    else map.delete(key);
    if (notify) this.onChange({ kind, key, object: next });
  }
}
