/**
 * stale-restart (stale state, time travel), within the API contract: when `at` fires, restart the
 * controller and serve its initial list/watch from a view frozen right after the change `viewAfter`
 * (an earlier moment), as a lagging API server would; replay history from there after
 * `releaseAfterSeconds`. Writes still go to the real server.
 *
 * `kinds`: the kinds whose lists and watches the view serves frozen; the others stay live. Absent:
 * every kind. kube-apiserver keeps one watch cache per resource, and each may lag on its own: a view
 * stale for the custom resource alone is what Sieve's plans (`pauseScope`) give.
 */
import { describeTrigger } from '../trigger.js';
import { join, MAX_DURATION_SECONDS } from '../validate.js';
import { declareFault, field, optional, type FaultOf } from './declare.js';
import { changeTriggerField, readKind, triggerField } from './fields.js';

export const staleRestart = declareFault({
  type: 'stale-restart',
  description: 'Stale state: restart the controller onto a view frozen right after viewAfter',
  fields: {
    at: triggerField(),
    viewAfter: changeTriggerField(),
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
  describe: (f) => `stale restart when ${describeTrigger(f.at)}`,
  // The stale view is held for its release time.
  extraMs: (f) => f.releaseAfterSeconds * 1000,
  restarts: true,
});

export type StaleRestartFault = FaultOf<typeof staleRestart>;
