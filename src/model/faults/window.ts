/**
 * A managed-system fault's window: it starts at its `at` trigger and heals when `until` fires or
 * `forSeconds` have passed, whichever comes first; one of them is required, so that the end state
 * shows whether the controller recovered after the heal.
 */
import { describeTrigger, type Trigger } from '../trigger.js';
import type { Validator } from '../validate.js';
import { field, optional, type Field } from './declare.js';

/** The longest window a managed-system fault may last by the clock (a test run's scale). */
export const WINDOW_SECONDS_MAX = 600;

/**
 * The end of a fault's window by the clock (`forSeconds`); read after `until`, and required when
 * there is none: a fault on the managed system lasts for a window and heals, so that the end state
 * shows whether the controller recovered.
 */
export const windowSecondsField = (): Field<number, true> =>
  optional(
    field(
      {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: WINDOW_SECONDS_MAX,
        description: `Heal this many seconds after the fault started (at most ${WINDOW_SECONDS_MAX}), unless \`until\` fired first`,
      },
      (v, raw, path) => {
        const seconds = v.number(raw, path, { max: WINDOW_SECONDS_MAX });
        if (seconds <= 0) v.fail(path, `a duration in seconds above 0, at most ${WINDOW_SECONDS_MAX} (got ${seconds})`);
        return seconds;
      },
    ),
  );

/** The check across a windowed fault's fields (declareFault's `check`): it says when it heals. */
export function checkWindowEnd(v: Validator, fault: Readonly<Record<string, unknown>>, path: string): void {
  if (fault.until === undefined && fault.forSeconds === undefined) v.fail(path, 'until (a trigger) or forSeconds, or both: when the fault heals');
}

/** How a windowed fault heals, in words. */
export function describeWindowEnd(f: { until?: Trigger; forSeconds?: number }): string {
  const parts = [f.until ? `until ${describeTrigger(f.until)}` : undefined, f.forSeconds !== undefined ? `for ${f.forSeconds} s` : undefined].filter(Boolean);
  return `healed ${parts.join(' or ')}`;
}

/** `checkWindowEnd` in JSON Schema. */
export const WINDOW_END_SCHEMA = { anyOf: [{ required: ['until'] }, { required: ['forSeconds'] }] };
