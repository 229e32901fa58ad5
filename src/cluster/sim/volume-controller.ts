/**
 * Persistent volumes, as API clients: a dynamic provisioner, kube-controller-manager's PV controller
 * (binding and reclaiming) and the pvc-protection / pv-protection controllers.
 * - A PVC without spec.volumeName binds to a PV already pre-bound to it, else to an Available PV that
 *   matches (storage class, access modes, capacity), else - unless storageClassName is "" (static
 *   binding only) - a PV `pvc-<pvc uid>` (deterministic mode: a uid-shaped digest of the claim's
 *   namespace/name) is provisioned (reclaimPolicy Delete, claimRef set, hostPath
 *   under /var/local-path-provisioner, as kind's local-path provisioner does) after `volumeBindDelayMs`.
 * - A claim whose storageClassName names an existing StorageClass is first annotated with the class's
 *   provisioner (volume.beta.kubernetes.io/storage-provisioner and volume.kubernetes.io/storage-provisioner,
 *   one update, as the PV controller's setClaimProvisioner does for an external provisioner); the
 *   provisioner, as an external provisioner does, waits for that annotation before creating the PV.
 *   A claim whose class does not exist is provisioned without it (a real cluster would leave it Pending
 *   unless a provisioner like this one watches every claim).
 * - Binding writes what the PV controller writes: PV status Bound; PVC spec.volumeName with the
 *   pv.kubernetes.io/bind-completed and bound-by-controller annotations; PVC status Bound with
 *   capacity and access modes.
 * - When the claim is gone, its PV turns Released; with reclaimPolicy Delete it is then deleted.
 * - A PVC being deleted keeps its `kubernetes.io/pvc-protection` finalizer while a scheduled,
 *   non-terminated pod uses it (an unscheduled one does not hold it); a PV being deleted keeps `kubernetes.io/pv-protection` while Bound.
 * With `bindVolumes: false` (next to a real kube-controller-manager) only the provisioner part runs:
 * PVs are created pre-bound and the released ones it provisioned are deleted; the rest is left to
 * the real PV and protection controllers.
 * Events on the claim: the PV controller's ExternalProvisioning after it annotates the claim (only with
 * bindVolumes, where this stands in for kube-controller-manager), and the provisioner's Provisioning
 * and ProvisioningSucceeded, from source `<provisioner>_<host>_<uuid>` as sig-storage-lib-external-provisioner
 * (kind's local-path provisioner) names itself.
 * Volume expansion, as an external resizer does it: a bound claim whose request grew past its
 * capacity, in a class with allowVolumeExpansion, gets its PV's capacity and its own status.capacity
 * raised (a VolumeResizeSuccessful event; the node-side file system step is not modelled).
 * Claim faults (pvc-fault plans, `setClaimFault`), held until cleared:
 * - `pending`: a claim not bound yet stays Pending (nothing provisions or binds it);
 * - `lost`: a bound claim's phase turns Lost with the PV controller's ClaimLost warning, as when its
 *   volume is gone; at the heal the volume is found again and the claim is Bound;
 * - `resize-refused`: a grown request is refused as a CSI resizer refuses an infeasible size: the
 *   ControllerResizeError condition ("Failed to expand PV: ..."), allocatedResourceStatuses storage
 *   ControllerResizeInfeasible and a VolumeResizeFailed warning; at the heal the resize is retried.
 * Simplifications: every storage class binds Immediately (no WaitForFirstConsumer), every
 * provisioner a StorageClass names is served by this one, and only PVs this provisioner created are deleted on release (a real
 * cluster deletes others through their volume plugin, or marks them Failed).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import { claimNames, clone, hasFinalizer, isBeingDeleted, isPodTerminal, now, spec, status, str } from './objects.js';
import type { CoreEventRecorder } from './events.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';
import { SIM_HOSTNAME } from './scheduler.js';

export const PROVISIONER = 'kperturb.dev/simulated-provisioner';
export const PVC_PROTECTION = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION = 'kubernetes.io/pv-protection';
const STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
const BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';

const UNITS: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };

/** resource.Quantity for storage sizes, in bytes (NaN when unparseable). */
export function quantityBytes(q: unknown): number {
  const m = /^(\d+(?:\.\d+)?)([a-zA-Z]*)$/.exec(String(q ?? ''));
  if (!m || UNITS[m[2]!] === undefined) return NaN;
  return Number(m[1]) * UNITS[m[2]!]!;
}

function requestOf(pvc: KubeObject): string {
  const res = spec(pvc).resources;
  const req = isObject(res) && isObject(res.requests) ? res.requests.storage : undefined;
  return typeof req === 'string' ? req : '1Gi';
}

function accessModes(obj: KubeObject): string[] {
  const m = spec(obj).accessModes;
  return Array.isArray(m) ? (m as string[]) : [];
}

/** A claim fault injected by a pvc-fault plan. */
export type ClaimFaultMode = 'pending' | 'lost' | 'resize-refused';

/** What an injected resize failure says, as a CSI driver's OutOfRange answer reads in the resizer's message. */
const RESIZE_REFUSED = 'rpc error: code = OutOfRange desc = the requested size exceeds what the volume can grow to (kperturb pvc-fault)';

export class VolumeController {
  /** Injected claim faults, by namespace/name. */
  private readonly claimFaults = new Map<string, ClaimFaultMode>();
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private readonly waiting = new Set<string>();
  private readonly provisioned = new Map<string, number>();
  private readonly provisionerRecorders = new Map<string, CoreEventRecorder>();
  /** kube-controller-manager's PV controller (its events only with bindVolumes: a real one writes its own). */
  private readonly pvController: CoreEventRecorder;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly claims: Informer,
    private readonly volumes: Informer,
    private readonly pods: Informer,
    private readonly classes: Informer | undefined,
  ) {
    this.pvController = ctx.events.recorder({ component: 'persistentvolume-controller' });
    this.enqueue = runner.register('persistentvolume', (key) => (key.startsWith('pv|') ? this.syncVolume(key.slice(3)) : this.syncClaim(key.slice(4))));
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<VolumeController | undefined> {
    const [claims, volumes, pods, classes] = await Promise.all([
      ctx.informers.forKind('PersistentVolumeClaim', 'v1'),
      ctx.informers.forKind('PersistentVolume', 'v1'),
      ctx.informers.forKind('Pod', 'v1'),
      ctx.informers.forKind('StorageClass', 'storage.k8s.io/v1'),
    ]);
    if (!claims || !volumes || !pods) return undefined;
    const c = new VolumeController(ctx, runner, claims, volumes, pods, classes);
    classes?.subscribe((type) => {
      if (type === 'DELETED') return;
      for (const pvc of claims.list()) if (!str(spec(pvc).volumeName)) c.enqueue(`pvc|${pvc.metadata!.namespace}/${pvc.metadata!.name}`);
    });
    claims.subscribe((type, pvc) => {
      const key = `${pvc.metadata!.namespace}/${pvc.metadata!.name}`;
      if (type !== 'DELETED') c.enqueue(`pvc|${key}`);
      for (const pv of volumes.list()) {
        const ref = spec(pv).claimRef;
        if (isObject(ref) && ref.namespace === pvc.metadata?.namespace && ref.name === pvc.metadata?.name) c.enqueue(`pv|${pv.metadata!.name}`);
      }
    });
    volumes.subscribe((type, pv) => {
      if (type !== 'DELETED') c.enqueue(`pv|${pv.metadata!.name}`);
      for (const pvc of claims.list()) if (!str(spec(pvc).volumeName)) c.enqueue(`pvc|${pvc.metadata!.namespace}/${pvc.metadata!.name}`);
    });
    pods.onChange((_type, pod) => {
      for (const name of claimNames(pod)) {
        const pvc = claims.get(pod.metadata?.namespace, name);
        if (pvc && isBeingDeleted(pvc)) c.enqueue(`pvc|${pod.metadata!.namespace}/${name}`);
      }
    });
    return c;
  }

  /**
   * Sets (or, undefined, clears) the fault of a claim; why it cannot act, if it cannot: the claim
   * does not exist, is bound already (`pending`), is not bound (`lost`), or the real PV controller
   * owns binding (`lost` next to a real kube-controller-manager).
   */
  setClaimFault(namespace: string, name: string, mode: ClaimFaultMode | undefined): string | undefined {
    const key = `${namespace}/${name}`;
    const pvc = this.claims.get(namespace, name);
    if (mode !== undefined) {
      // A claim just created may not have reached the informer yet: it is held Pending by its name.
      if (!pvc && mode !== 'pending') return `PersistentVolumeClaim ${key} does not exist when the fault starts`;
      const bound = !!pvc && (str(spec(pvc).volumeName) !== '' || str(status(pvc).phase) === 'Bound');
      if (mode === 'pending' && bound) return `PersistentVolumeClaim ${key} is bound already when the fault starts`;
      if (mode === 'lost' && !bound) return `PersistentVolumeClaim ${key} is not bound when the fault starts: it has no volume to lose`;
      if (mode === 'lost' && !this.ctx.bindVolumes) return `the real PV controller binds ${key} again at once: a lost claim needs the simulated one`;
      this.claimFaults.set(key, mode);
    } else {
      this.claimFaults.delete(key);
    }
    this.enqueue(`pvc|${key}`);
    return undefined;
  }

  private async writeClaimStatus(pvc: KubeObject, next: Record<string, unknown>): Promise<void> {
    const current = this.claims.get(pvc.metadata?.namespace, pvc.metadata!.name!) ?? pvc;
    const written = await this.ctx.api.update(this.claims.info, { ...clone(current), status: next }, 'status');
    await this.claims.waitForWrite(written);
  }

  private async syncClaim(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const pvc = this.claims.get(namespace, name);
    if (!pvc) return;
    if (isBeingDeleted(pvc)) {
      if (this.ctx.bindVolumes) await this.protectClaim(pvc);
      return;
    }
    const fault = this.claimFaults.get(key);
    if (fault === 'pending') return;
    if (fault === 'lost') {
      if (str(status(pvc).phase) !== 'Lost') {
        await this.writeClaimStatus(pvc, { ...status(pvc), phase: 'Lost' });
        this.pvController.event(pvc, 'Warning', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
      }
      return;
    }
    // syncBoundClaim: a Lost claim whose volume is there again is Bound again.
    if (str(status(pvc).phase) === 'Lost' && this.volumes.get(undefined, str(spec(pvc).volumeName))) {
      await this.writeClaimStatus(pvc, { ...status(pvc), phase: 'Bound' });
      return;
    }
    if (str(status(pvc).phase) === 'Bound' && (this.requestGrew(pvc) || status(pvc).allocatedResourceStatuses)) {
      await this.resize(pvc, fault === 'resize-refused');
      return;
    }
    const volumeName = str(spec(pvc).volumeName);
    if (!this.ctx.bindVolumes) {
      if (
        volumeName ||
        this.volumes.list().some((pv) => isObject(spec(pv).claimRef) && (spec(pv).claimRef as Record<string, unknown>).uid === pvc.metadata?.uid)
      )
        return;
      if (spec(pvc).storageClassName === '' || this.findMatch(pvc)) return;
      // The real PV controller names the provisioner of an existing class first.
      if (this.storageClass(pvc) && !this.provisionerOf(pvc)) return;
      await this.provision(pvc);
      return;
    }
    if (volumeName) {
      const pv = this.volumes.get(undefined, volumeName);
      if (pv && str(status(pvc).phase) !== 'Bound') await this.bind(pvc, pv);
      return;
    }
    const preBound = this.volumes.list().find((pv) => {
      const ref = spec(pv).claimRef;
      return isObject(ref) && ref.namespace === namespace && ref.name === name && (!ref.uid || ref.uid === pvc.metadata?.uid) && !isBeingDeleted(pv);
    });
    if (preBound) {
      await this.bind(pvc, preBound);
      return;
    }
    const match = this.findMatch(pvc);
    if (match) {
      await this.bind(pvc, match);
      return;
    }
    if (spec(pvc).storageClassName === '') return; // static binding only: wait for a matching PV
    const cls = this.storageClass(pvc);
    if (cls && !this.provisionerOf(pvc)) {
      await this.setClaimProvisioner(pvc, str(cls.provisioner, PROVISIONER));
      return;
    }
    if (this.ctx.timing.volumeBindDelayMs > 0 && !this.waiting.has(key)) {
      this.waiting.add(key);
      this.enqueue(`pvc|${key}`, this.ctx.timing.volumeBindDelayMs);
      return;
    }
    this.waiting.delete(key);
    await this.provision(pvc);
  }

  /** The claim asks for more than it has. */
  private requestGrew(pvc: KubeObject): boolean {
    const capacity = isObject(status(pvc).capacity) ? quantityBytes((status(pvc).capacity as Record<string, unknown>).storage) : NaN;
    return quantityBytes(requestOf(pvc)) > capacity;
  }

  /** The external resizer: expand the volume and the claim, or (refused) say why not on the claim. */
  private async resize(pvc: KubeObject, refused: boolean): Promise<void> {
    const pv = this.volumes.get(undefined, str(spec(pvc).volumeName));
    if (!pv) return;
    const resizer = this.provisionerRecorder(this.provisionerOf(pvc) || PROVISIONER);
    const st = status(pvc);
    if (refused) {
      const conditions = Array.isArray(st.conditions) ? st.conditions.filter(isObject) : [];
      if (conditions.some((c) => c.type === 'ControllerResizeError')) return;
      const error = {
        type: 'ControllerResizeError',
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: now(),
        message: `Failed to expand PV: ${RESIZE_REFUSED}`,
      };
      await this.writeClaimStatus(pvc, { ...st, conditions: [...conditions, error], allocatedResourceStatuses: { storage: 'ControllerResizeInfeasible' } });
      resizer.event(
        pvc,
        'Warning',
        'VolumeResizeFailed',
        `resize volume "${pv.metadata?.name}" by resizer "${this.provisionerOf(pvc) || PROVISIONER}" failed: ${RESIZE_REFUSED}`,
      );
      return;
    }
    // A retry after the refusal: the resizer's error goes once it succeeds (or has nothing to do).
    const { allocatedResourceStatuses: _retried, conditions: _conditions, ...rest } = st;
    const kept = Array.isArray(st.conditions) ? st.conditions.filter((c) => isObject(c) && c.type !== 'ControllerResizeError') : [];
    const cleared = { ...rest, ...(kept.length > 0 ? { conditions: kept } : {}) };
    if (this.storageClass(pvc)?.allowVolumeExpansion !== true || !this.requestGrew(pvc)) {
      if (_retried) await this.writeClaimStatus(pvc, cleared);
      return;
    }
    const size = requestOf(pvc);
    const grown = clone(pv);
    grown.spec = { ...spec(grown), capacity: { ...(isObject(spec(grown).capacity) ? (spec(grown).capacity as Record<string, unknown>) : {}), storage: size } };
    await this.volumes.waitForWrite(await this.ctx.api.update(this.volumes.info, grown));
    await this.writeClaimStatus(pvc, { ...cleared, capacity: { ...(isObject(st.capacity) ? st.capacity : {}), storage: size } });
    resizer.event(pvc, 'Normal', 'VolumeResizeSuccessful', 'Resize volume succeeded');
  }

  /** The StorageClass the claim names, if the cluster has it. */
  private storageClass(pvc: KubeObject): KubeObject | undefined {
    const name = str(spec(pvc).storageClassName) || str(pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class']);
    return name ? this.classes?.get(undefined, name) : undefined;
  }

  private provisionerOf(pvc: KubeObject): string {
    return str(pvc.metadata?.annotations?.[STORAGE_PROVISIONER]) || str(pvc.metadata?.annotations?.[BETA_STORAGE_PROVISIONER]);
  }

  /** The recorder of an external provisioner, whose source component is `<name>_<host>_<uuid>`. */
  private provisionerRecorder(provisioner: string): CoreEventRecorder {
    let recorder = this.provisionerRecorders.get(provisioner);
    if (!recorder) {
      const uuid = this.ctx.deterministic ? uuidShaped(createHash('sha256').update(provisioner).digest('hex')) : randomUUID();
      // Kept a qualified name (name part at most 63 characters), which kube-apiserver checks reportingComponent against.
      const prefix = `${provisioner.split('/').pop()}_${SIM_HOSTNAME}_`;
      const component = `${provisioner}_${SIM_HOSTNAME}_${uuid.slice(0, Math.max(8, 63 - prefix.length))}`;
      recorder = this.ctx.events.recorder({ component });
      this.provisionerRecorders.set(provisioner, recorder);
    }
    return recorder;
  }

  /** setClaimProvisioner: one claim update with both provisioner annotations. */
  private async setClaimProvisioner(pvc: KubeObject, provisioner: string): Promise<void> {
    const next = clone(pvc);
    next.metadata!.annotations = { ...(next.metadata?.annotations ?? {}), [BETA_STORAGE_PROVISIONER]: provisioner, [STORAGE_PROVISIONER]: provisioner };
    try {
      const written = await this.ctx.api.update(this.claims.info, next);
      // provisionClaimOperationExternal: the claim waits for an external provisioner.
      this.pvController.event(
        written,
        'Normal',
        'ExternalProvisioning',
        `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
      );
      await this.claims.waitForWrite(written);
    } catch (err) {
      if (!isStatus(err, 404, 409)) throw err;
    }
  }

  private findMatch(pvc: KubeObject): KubeObject | undefined {
    const want = quantityBytes(requestOf(pvc));
    const cls = str(spec(pvc).storageClassName);
    const modes = accessModes(pvc);
    return this.volumes
      .list()
      .filter((pv) => !isBeingDeleted(pv) && !spec(pv).claimRef && str(status(pv).phase, 'Available') === 'Available')
      .filter((pv) => str(spec(pv).storageClassName) === cls && modes.every((m) => accessModes(pv).includes(m)))
      .filter((pv) => {
        const cap = isObject(spec(pv).capacity) ? quantityBytes((spec(pv).capacity as Record<string, unknown>).storage) : NaN;
        return !(cap < want);
      })
      .sort(
        (a, b) => quantityBytes((spec(a).capacity as Record<string, unknown>)?.storage) - quantityBytes((spec(b).capacity as Record<string, unknown>)?.storage),
      )[0];
  }

  /**
   * `pvc-<claim uid>` as real provisioners name volumes; in deterministic mode a uid-shaped digest of
   * the claim's namespace/name and a per-claim counter instead, so that every run names it alike.
   */
  private volumeNameFor(pvc: KubeObject): string {
    if (!this.ctx.deterministic) return `pvc-${pvc.metadata!.uid}`;
    const key = `${pvc.metadata?.namespace}/${pvc.metadata?.name}`;
    const n = (this.provisioned.get(key) ?? 0) + 1;
    this.provisioned.set(key, n);
    return `pvc-${uuidShaped(createHash('sha256').update(`${key}#${n}`).digest('hex'))}`;
  }

  private async provision(pvc: KubeObject): Promise<void> {
    if (this.volumes.list().some((pv) => isObject(spec(pv).claimRef) && (spec(pv).claimRef as Record<string, unknown>).uid === pvc.metadata?.uid)) return;
    const name = this.volumeNameFor(pvc);
    if (this.volumes.get(undefined, name)) return;
    const cls = str(spec(pvc).storageClassName);
    const pv: KubeObject = {
      metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER } },
      spec: {
        capacity: { storage: requestOf(pvc) },
        accessModes: accessModes(pvc).length ? accessModes(pvc) : ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        ...(cls ? { storageClassName: cls } : {}),
        volumeMode: str(spec(pvc).volumeMode, 'Filesystem'),
        claimRef: claimRefTo(pvc),
        hostPath: { path: `/var/local-path-provisioner/${name}_${pvc.metadata?.namespace}_${pvc.metadata?.name}`, type: 'DirectoryOrCreate' },
      },
    };
    this.ctx.log(`persistentvolume: provisioning ${name} for ${pvc.metadata?.namespace}/${pvc.metadata?.name}`);
    const recorder = this.provisionerRecorder(this.provisionerOf(pvc) || PROVISIONER);
    recorder.event(pvc, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${pvc.metadata?.namespace}/${pvc.metadata?.name}"`);
    try {
      const created = await this.ctx.api.create(this.volumes.info, undefined, pv);
      recorder.event(pvc, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${name}`);
      await this.volumes.waitForWrite(created);
      if (this.ctx.bindVolumes) await this.bind(pvc, created);
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
    }
  }

  private async bind(pvc: KubeObject, pvIn: KubeObject): Promise<void> {
    let pv = pvIn;
    const ref = spec(pv).claimRef;
    if (!isObject(ref) || ref.uid !== pvc.metadata?.uid) {
      const next = clone(pv);
      next.spec = {
        ...spec(next),
        claimRef: claimRefTo(pvc),
      };
      next.metadata!.annotations = { ...(next.metadata?.annotations ?? {}), 'pv.kubernetes.io/bound-by-controller': 'yes' };
      pv = await this.ctx.api.update(this.volumes.info, next);
    }
    if (str(status(pv).phase) !== 'Bound') {
      const next = clone(pv);
      next.status = { ...status(next), phase: 'Bound' };
      pv = await this.ctx.api.update(this.volumes.info, next, 'status');
    }
    await this.volumes.waitForWrite(pv);
    let claim = this.claims.get(pvc.metadata?.namespace, pvc.metadata!.name!) ?? pvc;
    if (str(spec(claim).volumeName) !== pv.metadata?.name) {
      const next = clone(claim);
      next.spec = { ...spec(next), volumeName: pv.metadata!.name };
      next.metadata!.annotations = {
        ...(next.metadata?.annotations ?? {}),
        'pv.kubernetes.io/bind-completed': 'yes',
        'pv.kubernetes.io/bound-by-controller': 'yes',
      };
      claim = await this.ctx.api.update(this.claims.info, next);
    }
    const next = clone(claim);
    next.status = { ...status(next), phase: 'Bound', accessModes: accessModes(pv), capacity: clone(spec(pv).capacity) };
    const written = await this.ctx.api.update(this.claims.info, next, 'status');
    this.ctx.log(`persistentvolume: bound ${pvc.metadata?.namespace}/${pvc.metadata?.name} to ${pv.metadata?.name}`);
    await this.claims.waitForWrite(written);
  }

  private async protectClaim(pvc: KubeObject): Promise<void> {
    if (!hasFinalizer(pvc, PVC_PROTECTION)) return;
    // The pvc-protection controller's podUsesPVC counts scheduled pods only: the kubelet sees a pod once
    // it is scheduled, and the scheduler never places one whose claim is being deleted.
    const inUse = this.pods.list(pvc.metadata?.namespace).some((p) => !!spec(p).nodeName && !isPodTerminal(p) && claimNames(p).includes(pvc.metadata!.name!));
    if (inUse) return;
    await this.removeFinalizer(this.claims, pvc, PVC_PROTECTION);
  }

  private async removeFinalizer(informer: Informer, obj: KubeObject, finalizer: string): Promise<void> {
    const finalizers = (obj.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
    await this.ctx.api
      .patch(informer.info, obj.metadata?.namespace, obj.metadata!.name!, 'merge', {
        metadata: { resourceVersion: obj.metadata?.resourceVersion, finalizers: finalizers.length ? finalizers : null },
      })
      .catch((err: unknown) => {
        if (!isStatus(err, 404)) throw err;
      });
  }

  private async syncVolume(name: string): Promise<void> {
    const pv = this.volumes.get(undefined, name);
    if (!pv) return;
    const ref = spec(pv).claimRef;
    const claim = isObject(ref) ? this.claims.get(str(ref.namespace), str(ref.name)) : undefined;
    const claimGone = isObject(ref) && !!ref.uid && (!claim || claim.metadata?.uid !== ref.uid);
    if (isBeingDeleted(pv)) {
      if (this.ctx.bindVolumes && hasFinalizer(pv, PV_PROTECTION) && (str(status(pv).phase) !== 'Bound' || claimGone))
        await this.removeFinalizer(this.volumes, pv, PV_PROTECTION);
      return;
    }
    if (!isObject(ref)) {
      if (this.ctx.bindVolumes && (!status(pv).phase || status(pv).phase === 'Pending')) await this.setPhase(pv, 'Available');
      return;
    }
    if (!claimGone) {
      if (this.ctx.bindVolumes && claim && str(spec(claim).volumeName) === '') this.enqueue(`pvc|${str(ref.namespace)}/${str(ref.name)}`);
      return;
    }
    let current = pv;
    if (this.ctx.bindVolumes && str(status(pv).phase) !== 'Released' && str(status(pv).phase) !== 'Failed') current = await this.setPhase(pv, 'Released');
    const provisionedHere = pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'] === PROVISIONER;
    if (provisionedHere && str(spec(pv).persistentVolumeReclaimPolicy, 'Retain') === 'Delete') {
      this.ctx.log(`persistentvolume: deleting released volume ${name}`);
      await this.ctx.api.delete(this.volumes.info, undefined, name, { preconditions: { uid: current.metadata?.uid } }).catch((err: unknown) => {
        if (!isStatus(err, 404, 409)) throw err;
      });
    }
  }

  private async setPhase(pv: KubeObject, phase: string): Promise<KubeObject> {
    const next = clone(pv);
    next.status = { ...status(next), phase };
    const written = await this.ctx.api.update(this.volumes.info, next, 'status');
    await this.volumes.waitForWrite(written);
    return written;
  }
}

function uuidShaped(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** A PersistentVolume's reference to the claim it is bound to, as the binder writes it. */
function claimRefTo(pvc: KubeObject): Record<string, unknown> {
  const m = pvc.metadata;
  return { kind: 'PersistentVolumeClaim', namespace: m?.namespace, name: m?.name, uid: m?.uid, apiVersion: 'v1', resourceVersion: m?.resourceVersion };
}
