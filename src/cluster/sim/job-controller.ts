/**
 * The Job controller (pkg/controller/job) and the TTL-after-finished controller, as API clients.
 * - Pods: generateName `<job>-`, the template's labels (which the API server defaults to include
 *   batch.kubernetes.io/controller-uid and job-name), controller ownerReference, and the
 *   `batch.kubernetes.io/job-tracking` finalizer; up to min(parallelism, completions - succeeded)
 *   active at a time (NonIndexed completion mode; Indexed jobs get the completion-index annotation and
 *   label and the `<job>-<index>-` name prefix).
 * - Finished pods are counted through status.uncountedTerminatedPods, their finalizer removed, then
 *   moved into status.succeeded / status.failed (the real three-step accounting).
 * - Status: startTime, active, ready, terminating, succeeded, failed, uncountedTerminatedPods,
 *   completionTime, conditions SuccessCriteriaMet + Complete (reason CompletionsReached), or
 *   FailureTarget + Failed (BackoffLimitExceeded) when failures exceed spec.backoffLimit (default 6).
 * - Suspended jobs (spec.suspend) delete their active pods and get Suspended=True.
 * - Events (source job-controller) on the Job: SuccessfulCreate "Created pod: x" and
 *   SuccessfulDelete "Deleted pod: x" (RealPodControl), Completed "Job completed" or the Failed
 *   condition's reason and message once the Job finishes, Suspended / Resumed.
 * - ttlSecondsAfterFinished: the finished Job is deleted with propagationPolicy Foreground after the TTL.
 */
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import {
  clone,
  conditions,
  controllerRef,
  deepEqual,
  hasFinalizer,
  isBeingDeleted,
  isControlledBy,
  isPodReady,
  now,
  num,
  podFromTemplate,
  podPhase,
  podTemplate,
  setCondition,
  spec,
  status,
  str,
  type Condition,
} from './objects.js';
import type { CoreEventRecorder } from './events.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
const COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';

export class JobController {
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private readonly recorder: CoreEventRecorder;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly jobs: Informer,
    private readonly pods: Informer,
  ) {
    this.enqueue = runner.register('job', (key) => this.sync(key));
    this.recorder = ctx.events.recorder({ component: 'job-controller' });
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<JobController | undefined> {
    const [jobs, pods] = await Promise.all([ctx.informers.forKind('Job', 'batch/v1'), ctx.informers.forKind('Pod', 'v1')]);
    if (!jobs || !pods) return undefined;
    const c = new JobController(ctx, runner, jobs, pods);
    jobs.subscribe((type, job) => {
      if (type !== 'DELETED') c.enqueue(`${job.metadata!.namespace}/${job.metadata!.name}`);
    });
    pods.onChange((_type, pod) => {
      const ref = controllerRef(pod);
      if (ref?.kind === 'Job') c.enqueue(`${pod.metadata!.namespace}/${ref.name}`);
    });
    return c;
  }

  private finished(job: KubeObject): Condition | undefined {
    return conditions(job).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const job = this.jobs.get(namespace, name);
    if (!job) return;
    const done = this.finished(job);
    if (done) {
      await this.removeFinalizers(this.pods.list(namespace).filter((p) => isControlledBy(p, job) && hasFinalizer(p, JOB_TRACKING_FINALIZER)));
      await this.ttlAfterFinished(job, done);
      return;
    }
    const pods = this.pods.list(namespace).filter((p) => isControlledBy(p, job));
    const st = status(job);
    const uncounted = isObject(st.uncountedTerminatedPods) ? st.uncountedTerminatedPods : {};
    const uncountedSucceeded = new Set(Array.isArray(uncounted.succeeded) ? (uncounted.succeeded as string[]) : []);
    const uncountedFailed = new Set(Array.isArray(uncounted.failed) ? (uncounted.failed as string[]) : []);

    // 1. finished pods still carrying the tracking finalizer: record them as uncounted
    // A pod deleted before it was scheduled never gets a terminal phase (no kubelet): it counts as failed.
    const isFinished = (p: KubeObject) => podPhase(p) === 'Succeeded' || podPhase(p) === 'Failed' || (isBeingDeleted(p) && !str(spec(p).nodeName));
    const newlyFinished = pods.filter((p) => hasFinalizer(p, JOB_TRACKING_FINALIZER) && isFinished(p));
    let recorded = false;
    for (const p of newlyFinished) {
      const uid = p.metadata!.uid!;
      const target = podPhase(p) === 'Succeeded' ? uncountedSucceeded : uncountedFailed;
      if (!uncountedSucceeded.has(uid) && !uncountedFailed.has(uid)) {
        target.add(uid);
        recorded = true;
      }
    }
    if (recorded) {
      await this.writeStatus(job, {
        ...st,
        uncountedTerminatedPods: {
          ...(uncountedSucceeded.size ? { succeeded: [...uncountedSucceeded] } : {}),
          ...(uncountedFailed.size ? { failed: [...uncountedFailed] } : {}),
        },
      });
      return;
    }
    // 2. remove their finalizers
    if (newlyFinished.length > 0) {
      await this.removeFinalizers(newlyFinished);
      return;
    }
    // 3. move uncounted pods whose finalizer is gone into the counters
    let succeeded = num(st.succeeded, 0);
    let failed = num(st.failed, 0);
    for (const uid of [...uncountedSucceeded]) {
      const pod = pods.find((p) => p.metadata?.uid === uid);
      if (!pod || !hasFinalizer(pod, JOB_TRACKING_FINALIZER)) {
        uncountedSucceeded.delete(uid);
        succeeded++;
      }
    }
    for (const uid of [...uncountedFailed]) {
      const pod = pods.find((p) => p.metadata?.uid === uid);
      if (!pod || !hasFinalizer(pod, JOB_TRACKING_FINALIZER)) {
        uncountedFailed.delete(uid);
        failed++;
      }
    }

    const active = pods.filter((p) => !isBeingDeleted(p) && podPhase(p) !== 'Succeeded' && podPhase(p) !== 'Failed');
    const terminating = pods.filter((p) => isBeingDeleted(p) && podPhase(p) !== 'Succeeded' && podPhase(p) !== 'Failed');
    const js = spec(job);
    const parallelism = num(js.parallelism, 1);
    const completions = js.completions === undefined || js.completions === null ? undefined : num(js.completions, 1);
    const backoffLimit = num(js.backoffLimit, 6);
    const suspended = js.suspend === true;
    const indexed = str(js.completionMode, 'NonIndexed') === 'Indexed';

    let conds = conditions(job);
    let completionTime: string | undefined;
    const complete = completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0;
    const failedOut = failed > backoffLimit;
    if (!isBeingDeleted(job) && !complete && !failedOut) {
      if (suspended) {
        for (const p of active) await this.deletePod(job, p);
      } else {
        const want = completions !== undefined ? Math.min(parallelism, completions - succeeded) : succeeded > 0 ? 0 : parallelism;
        if (active.length < want) {
          await this.createPods(job, want - active.length, indexed ? this.freeIndexes(pods, completions ?? parallelism, want - active.length) : undefined);
          return; // the status follows when the new pods are observed
        }
        if (active.length > want) for (const p of active.slice(want)) await this.deletePod(job, p);
      }
    }
    if (complete && active.length === 0 && terminating.length === 0) {
      conds = setCondition(conds, {
        type: 'SuccessCriteriaMet',
        status: 'True',
        reason: 'CompletionsReached',
        message: 'Reached expected number of succeeded pods',
        lastProbeTime: now(),
      });
      conds = setCondition(conds, {
        type: 'Complete',
        status: 'True',
        reason: 'CompletionsReached',
        message: 'Reached expected number of succeeded pods',
        lastProbeTime: now(),
      });
      completionTime = now();
    } else if (failedOut) {
      for (const p of active) await this.deletePod(job, p);
      if (active.length === 0 && terminating.length === 0) {
        conds = setCondition(conds, {
          type: 'FailureTarget',
          status: 'True',
          reason: 'BackoffLimitExceeded',
          message: 'Job has reached the specified backoff limit',
          lastProbeTime: now(),
        });
        conds = setCondition(conds, {
          type: 'Failed',
          status: 'True',
          reason: 'BackoffLimitExceeded',
          message: 'Job has reached the specified backoff limit',
          lastProbeTime: now(),
        });
      }
    }
    if (suspended && !conds.some((c) => c.type === 'Suspended' && c.status === 'True')) {
      conds = setCondition(conds, { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended', lastProbeTime: now() });
    } else if (!suspended && conds.some((c) => c.type === 'Suspended' && c.status === 'True')) {
      conds = setCondition(conds, { type: 'Suspended', status: 'False', reason: 'JobResumed', message: 'Job resumed', lastProbeTime: now() });
    }
    const next: Record<string, unknown> = {
      ...st,
      ...(suspended && !st.startTime ? {} : { startTime: str(st.startTime) || now() }),
      active: active.length,
      ready: active.filter(isPodReady).length,
      terminating: terminating.length,
      succeeded,
      failed,
      uncountedTerminatedPods: {
        ...(uncountedSucceeded.size ? { succeeded: [...uncountedSucceeded] } : {}),
        ...(uncountedFailed.size ? { failed: [...uncountedFailed] } : {}),
      },
      ...(conds.length ? { conditions: conds } : {}),
      ...(completionTime ? { completionTime } : {}),
    };
    if (indexed) next.completedIndexes = this.completedIndexes(pods);
    for (const f of ['active', 'succeeded', 'failed']) if (next[f] === 0) delete next[f];
    if (deepEqual(next, st)) return;
    if (!(await this.writeStatus(job, next))) return;
    // recordJobFinished and the suspend/resume events follow the status write that made the change.
    const finished = conds.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
    if (finished && !this.finished(job)) {
      if (finished.type === 'Complete') this.recorder.event(job, 'Normal', 'Completed', 'Job completed');
      else this.recorder.event(job, 'Warning', str(finished.reason), str(finished.message));
    }
    const wasSuspended = conditions(job).some((c) => c.type === 'Suspended' && c.status === 'True');
    if (suspended && !wasSuspended) this.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
    else if (!suspended && wasSuspended) this.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
  }

  private freeIndexes(pods: KubeObject[], total: number, count: number): number[] {
    const taken = new Set(
      pods.filter((p) => !isBeingDeleted(p) && podPhase(p) !== 'Failed').map((p) => Number(p.metadata?.annotations?.[COMPLETION_INDEX] ?? '-1')),
    );
    const free: number[] = [];
    for (let i = 0; i < total && free.length < count; i++) if (!taken.has(i)) free.push(i);
    return free;
  }

  private completedIndexes(pods: KubeObject[]): string {
    const done = [...new Set(pods.filter((p) => podPhase(p) === 'Succeeded').map((p) => Number(p.metadata?.annotations?.[COMPLETION_INDEX] ?? '-1')))]
      .filter((i) => i >= 0)
      .sort((a, b) => a - b);
    const ranges: string[] = [];
    for (let i = 0; i < done.length;) {
      let j = i;
      while (j + 1 < done.length && done[j + 1] === done[j]! + 1) j++;
      ranges.push(i === j ? String(done[i]) : `${done[i]}-${done[j]}`);
      i = j + 1;
    }
    return ranges.join(',');
  }

  private async createPods(job: KubeObject, count: number, indexes: number[] | undefined): Promise<void> {
    const template = podTemplate(job);
    for (let i = 0; i < count; i++) {
      const index = indexes?.[i];
      if (indexes && index === undefined) return;
      const pod = podFromTemplate(job, template, index !== undefined ? { [COMPLETION_INDEX]: String(index) } : {});
      pod.metadata!.finalizers = [...(pod.metadata!.finalizers ?? []), JOB_TRACKING_FINALIZER];
      if (index !== undefined) {
        pod.metadata!.annotations = { ...(pod.metadata!.annotations ?? {}), [COMPLETION_INDEX]: String(index) };
        (pod.spec as Record<string, unknown>).hostname = `${job.metadata!.name}-${index}`;
      }
      Object.assign(pod.metadata!, this.ctx.nameFor(index !== undefined ? `${job.metadata!.name}-${index}-` : `${job.metadata!.name}-`));
      try {
        const created = await this.ctx.api.create(this.pods.info, job.metadata?.namespace, pod);
        this.ctx.log(`job: created pod ${created.metadata?.namespace}/${created.metadata?.name}`);
        this.recorder.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata?.name}`);
        await this.pods.waitForWrite(created);
      } catch (err) {
        if (isStatus(err, 409) && pod.metadata?.name) {
          i--;
          continue;
        }
        throw err;
      }
    }
  }

  private async deletePod(job: KubeObject, pod: KubeObject): Promise<void> {
    const res = await this.ctx.api
      .delete(this.pods.info, pod.metadata?.namespace, pod.metadata!.name!, { preconditions: { uid: pod.metadata?.uid } })
      .catch((err: unknown) => {
        if (!isStatus(err, 404, 409)) throw err;
      });
    if (res) this.recorder.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata?.name}`);
  }

  private async removeFinalizers(pods: KubeObject[]): Promise<void> {
    for (const p of pods) {
      const finalizers = (p.metadata?.finalizers ?? []).filter((f) => f !== JOB_TRACKING_FINALIZER);
      try {
        const written = await this.ctx.api.patch(this.pods.info, p.metadata?.namespace, p.metadata!.name!, 'merge', {
          metadata: { uid: p.metadata?.uid, resourceVersion: p.metadata?.resourceVersion, finalizers: finalizers.length ? finalizers : null },
        });
        await this.pods.waitForWrite(written);
      } catch (err) {
        if (!isStatus(err, 404)) throw err; // 409: retried with the fresh pod
      }
    }
  }

  /** false: the Job is gone. */
  private async writeStatus(job: KubeObject, next: Record<string, unknown>): Promise<boolean> {
    const updated = clone(job);
    updated.status = next;
    try {
      const written = await this.ctx.api.update(this.jobs.info, updated, 'status');
      await this.jobs.waitForWrite(written);
      return true;
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
      return false;
    }
  }

  private async ttlAfterFinished(job: KubeObject, done: Condition): Promise<void> {
    const ttl = spec(job).ttlSecondsAfterFinished;
    if (typeof ttl !== 'number' || isBeingDeleted(job)) return;
    const finishedAt = Date.parse(str(status(job).completionTime) || done.lastTransitionTime || '');
    const due = (Number.isFinite(finishedAt) ? finishedAt : Date.now()) + ttl * 1000;
    if (Date.now() < due) {
      this.enqueue(`${job.metadata!.namespace}/${job.metadata!.name}`, due - Date.now());
      return;
    }
    this.ctx.log(`ttl-after-finished: deleting job ${job.metadata?.namespace}/${job.metadata?.name}`);
    await this.ctx.api
      .delete(this.jobs.info, job.metadata?.namespace, job.metadata!.name!, {
        propagationPolicy: 'Foreground',
        preconditions: { uid: job.metadata?.uid, resourceVersion: job.metadata?.resourceVersion },
      })
      .catch((err: unknown) => {
        if (!isStatus(err, 404, 409)) throw err;
      });
  }
}
