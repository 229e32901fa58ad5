/**
 * stale-restart in a run: from the start of the run the proxy marks the resourceVersion at which
 * the cluster went through `viewAfter` (or the one right before `viewBefore`); when `at` fires the controller is held, killed, its Leases
 * deleted, and restarted onto a view frozen at that resourceVersion, released once the restarted
 * controller, having read from it, has acted on it and gone quiet (`quietMs`, the quiet window that
 * says a run has settled) or is going round in a loop of the same reads and refused writes, or of
 * writes each round undoes (src/model/retry-loop.ts), and at the latest `releaseAfterSeconds` after
 * that first read.
 */
import { describeChange, describeStaleView, describeTrigger, staleViewMoment, type StaleRestartFault } from '../../model/plan.js';
import { RETRY_LOOP_ROUNDS } from '../../model/retry-loop.js';
import { sleep } from '../../workload/runner.js';
import type { ArmFault, FaultRun } from './arming.js';
import type { StaleView } from '../../../proxy/index.js';

/** How long a restarted controller may take to read from its stale view before the release timer starts anyway. */
const RESTART_READ_TIMEOUT_MS = 30_000;

export const armStaleRestart: ArmFault<StaleRestartFault> = (fault, run) => {
  const moment = staleViewMoment(fault);
  const mark = run.primitives.triggers.markChange(moment.change, { before: moment.before });
  const armed = run.primitives.triggers.arm(fault.at, (info) => {
    const rv = mark.resourceVersion;
    if (rv === undefined) {
      run.refuse(`${describeTrigger(fault.at)} happened before ${describeChange(moment.change)}: no view to go back to`);
      return;
    }
    run.primitives.holdController();
    run.fired();
    run.trace.append({
      type: 'fault',
      fault: 'stale-restart',
      phase: 'triggered',
      faultIndex: run.index,
      resourceVersion: rv,
      ...(info.requestId !== undefined ? { requestId: info.requestId } : {}),
      detail: `${describeTrigger(fault.at)}: holding the controller, to restart it onto the view ${describeStaleView(moment)} (resourceVersion ${rv})`,
    });
    run.log(`  fault fired: ${describeTrigger(fault.at)}; restarting the controller onto the view at resourceVersion ${rv}`);
    run.restart(info.requestId, async () => {
      const view = run.primitives.staleViews.serve(rv, run.index, fault.kinds);
      run.releaseAtEnd(() => view.release());
      return () => releaseWhenDone(fault, run, view);
    });
  });
  return { whyNotFired: () => armed.whyNotFired() ?? mark.whyNotFired() };
};

async function releaseWhenDone(fault: StaleRestartFault, run: FaultRun, view: StaleView): Promise<void> {
  // The stale window starts when the restarted controller first reads from the view.
  await Promise.race([view.firstServed, sleep(RESTART_READ_TIMEOUT_MS)]);
  let churn = false;
  const retrying = view.retrying.then((loop) => (churn = loop.churn));
  const why = await run.quietWithin(fault.releaseAfterSeconds * 1000, retrying);
  run.log(
    `  stale view released ${
      why === 'quiet'
        ? `once the controller had acted on it and been quiet for ${run.quietMs} ms`
        : why === 'retrying'
          ? `once the controller, on it, had made the same round of requests ${RETRY_LOOP_ROUNDS} times, ${
              churn ? 'each round remaking what was removed after the one before' : 'the cluster unchanged'
            }`
          : `after ${fault.releaseAfterSeconds} s`
    }`,
  );
  view.release();
}
