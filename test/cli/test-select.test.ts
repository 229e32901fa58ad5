/** `kperturb test --pattern P --workload W`: part of a campaign, and bad selections named. */
import test from 'ava';
import { selectPlans } from '../../src/cli/commands/test.js';
import { UserInputError } from '../../src/model/errors.js';
import type { TestPlan } from '../../src/model/plan.js';

const plan = (name: string, pattern: string, workload: string) => ({ metadata: { name }, spec: { pattern, workload } }) as unknown as TestPlan;
const plans = [
  plan('a', 'stale-state', 'recreate'),
  plan('b', 'error-path', 'recreate'),
  plan('c', 'stale-state', 'scale'),
  plan('d', 'unobserved-state', 'scale'),
];
const names = (ps: TestPlan[]) => ps.map((p) => p.metadata.name);

test('no selection keeps every plan; a pattern, a workload or both keep only theirs', (t) => {
  t.deepEqual(names(selectPlans(plans, undefined, undefined, ['recreate', 'scale'])), ['a', 'b', 'c', 'd']);
  t.deepEqual(names(selectPlans(plans, ['stale-state'], undefined, ['recreate', 'scale'])), ['a', 'c']);
  t.deepEqual(names(selectPlans(plans, ['stale-state', 'error-path'], ['recreate'], ['recreate', 'scale'])), ['a', 'b']);
  t.deepEqual(names(selectPlans(plans, undefined, ['scale'], ['recreate', 'scale'])), ['c', 'd']);
});

test('a workload the config does not have, and a selection with no plan, are bad input naming the option', (t) => {
  const unknown = t.throws(() => selectPlans(plans, undefined, ['nope'], ['recreate', 'scale']), { instanceOf: UserInputError });
  t.is(unknown.message, 'at --workload: a workload of the config (recreate, scale; got "nope")');
  const empty = t.throws(() => selectPlans(plans, ['intermediate-state'], ['scale'], ['recreate', 'scale']), { instanceOf: UserInputError });
  t.is(empty.message, 'at --pattern: a selection with at least one plan (none of the 4 plans is of pattern intermediate-state; workload scale)');
});
