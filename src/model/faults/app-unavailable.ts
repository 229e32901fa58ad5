/**
 * app-unavailable (the managed system fails): from `at` on, the stub application (kperturb.yaml
 * `applications:`) of one pod or Service, or of all of them, is unavailable to the controller until
 * `until` fires or `forSeconds` have passed; then it answers normally again.
 * - `service-unavailable` / `internal-error`: every HTTP call is answered 503 / 500 (an HTTP
 *   application only);
 * - `refuse`: the address stops listening (connections refused, open ones reset), as when the
 *   application's process is down; it listens again at the heal, with its state as before.
 * A call trigger (`at: { call: ... }`) fires as the call arrives, so that very call gets the fault.
 *
 *   - type: app-unavailable
 *     application: kv
 *     key: Pod/default/kv1-0
 *     answer: service-unavailable
 *     at: { call: { application: kv, key: Pod/default/kv1-0, operation: POST, path: /upgrade, occurrence: 1 } }
 *     until: { call: { application: kv, key: Pod/default/kv1-0, occurrence: 2 } }
 */
import { describeTrigger } from '../trigger.js';
import { declareFault, field, optional, type FaultOf } from './declare.js';
import { enumField, optionalTriggerField, readKeyOf, triggerField } from './fields.js';
import { checkWindowEnd, describeWindowEnd, WINDOW_END_SCHEMA, windowSecondsField } from './window.js';

export const APP_UNAVAILABLE_ANSWERS = ['service-unavailable', 'internal-error', 'refuse'] as const;
export type AppUnavailableAnswer = (typeof APP_UNAVAILABLE_ANSWERS)[number];

/** The HTTP status each error answer gives. */
export const APP_ERROR_STATUS: Record<Exclude<AppUnavailableAnswer, 'refuse'>, number> = { 'service-unavailable': 503, 'internal-error': 500 };

const ANSWER_TEXT: Record<AppUnavailableAnswer, string> = {
  'service-unavailable': 'answer 503 Service Unavailable',
  'internal-error': 'answer 500 Internal Server Error',
  refuse: 'refuse connections',
};

export const appUnavailable = declareFault({
  type: 'app-unavailable',
  onManagedSystem: true,
  description: "The managed system fails: a pod's (or Service's) stub application answers errors or refuses connections for a window, then recovers",
  fields: {
    application: field({ type: 'string', minLength: 1, description: "The application's name in kperturb.yaml (applications:)" }, (v, raw, path) => {
      const name = v.string(raw, path);
      if (name === '') v.fail(path, "an application's name from kperturb.yaml (got an empty string)");
      return name;
    }),
    key: optional(
      field(
        { type: 'string', pattern: '^(Pod|Service)/[^/]+/[^/]+$', description: 'The pod or Service whose address fails (absent: all of the application)' },
        (v, raw, path) => readKeyOf(v, raw, path, ['Pod', 'Service']),
      ),
    ),
    answer: enumField(APP_UNAVAILABLE_ANSWERS, 'service-unavailable / internal-error: HTTP calls get 503 / 500; refuse: connections are refused'),
    at: triggerField(),
    until: optionalTriggerField('Heal when this fires (after the fault started); a call trigger heals before that call is answered'),
    forSeconds: windowSecondsField(),
  },
  check: checkWindowEnd,
  checkSchema: WINDOW_END_SCHEMA,
  describe: (f) => `make ${f.application}${f.key ? ` on ${f.key}` : ''} ${ANSWER_TEXT[f.answer]} when ${describeTrigger(f.at)}, ${describeWindowEnd(f)}`,
  extraMs: (f) => (f.forSeconds ?? 0) * 1000,
});

export type AppUnavailableFault = FaultOf<typeof appUnavailable>;
