/**
 * stale-restart (stale state, time travel), within the API contract: when `at` fires, restart the
 * controller and serve its initial list/watch from a view frozen at an earlier moment, as a lagging
 * API server would; replay history from there after `releaseAfterSeconds`. Writes still go to the
 * real server.
 *
 * The moment, one of:
 * - `viewAfter`: right after a change (the state the controller was shown when it made a write);
 * - `viewBefore`: right before a change, whatever happened just before it in this run (Sieve's
 *   pause: "stop the view before the API server receives this update"). A view of the desired state
 *   before the workload changed it, with everything else as recent as it was then: the controller's
 *   own reports in it are the ones it had made, so it does not rewrite them (with the view's stale
 *   resourceVersion, a conflict every reconcile) before it acts on the old desired state.
 *
 * `kinds`: the kinds whose lists and watches the view serves frozen; the others stay live. Absent:
 * every kind. kube-apiserver keeps one watch cache per resource, and each may lag on its own: a view
 * stale for the custom resource alone is what Sieve's plans (`pauseScope`) give.
 */
import { describeChange, describeTrigger, type ChangeTrigger } from '../trigger.js';
import { join, MAX_DURATION_SECONDS } from '../validate.js';
import { declareFault, field, optional, type FaultOf } from './declare.js';
import { changeTriggerField, readKind, triggerField } from './fields.js';

export const staleRestart = declareFault({
  type: 'stale-restart',
  description: 'Stale state: restart the controller onto a view frozen right after viewAfter, or right before viewBefore',
  fields: {
    at: triggerField(),
    viewAfter: optional(changeTriggerField()),
    viewBefore: optional(changeTriggerField()),
    releaseAfterSeconds: field(
      {
        type: 'number',
        description: 'The longest the stale view is served after the restarted controller first reads it',
        minimum: 0,
        maximum: MAX_DURATION_SECONDS,
      },
      (v, raw, path) => v.duration(raw, path, 'seconds'),
    ),
    kinds: optional(
      field({ type: 'array', items: { type: 'string' }, minItems: 1 }, (v, raw, path) => {
        const kinds = v.stringArray(raw, path);
        if (kinds.length === 0) v.fail(path, 'at least one kind (leave `kinds` out to freeze every kind)');
        kinds.forEach((k, i) => readKind(v, k, join(path, i), 'ZookeeperCluster'));
        return kinds;
      }),
    ),
  },
  check(v, fault, path) {
    const n = Number(fault.viewAfter !== undefined) + Number(fault.viewBefore !== undefined);
    if (n !== 1) v.fail(path, `viewAfter or viewBefore (a change trigger), exactly one: the moment the view is frozen at${n === 2 ? ' (got both)' : ''}`);
  },
  checkSchema: { oneOf: [{ required: ['viewAfter'] }, { required: ['viewBefore'] }] },
  describe: (f) => `stale restart when ${describeTrigger(f.at)}`,
  // The stale view is held for its release time.
  extraMs: (f) => f.releaseAfterSeconds * 1000,
  restarts: true,
});

export type StaleRestartFault = FaultOf<typeof staleRestart>;

/** The moment a stale-restart's view is frozen at. */
export interface StaleViewMoment {
  change: ChangeTrigger;
  /** Right before the change (`viewBefore`), else right after it. */
  before: boolean;
}

export function staleViewMoment(f: StaleRestartFault): StaleViewMoment {
  return f.viewBefore ? { change: f.viewBefore, before: true } : { change: f.viewAfter!, before: false };
}

/** "right after X is updated (...)" / "right before X is updated (...)". */
export function describeStaleView(m: StaleViewMoment): string {
  return `right ${m.before ? 'before' : 'after'} ${describeChange(m.change)}`;
}
