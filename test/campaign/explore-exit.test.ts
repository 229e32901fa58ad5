import test from 'ava';
import { exploreExitCode } from '../../src/campaign/explore.js';
import type { ExploreAlarm } from '../../oracles/explore/index.js';

type Sequences = Parameters<typeof exploreExitCode>[0]['sequences'];

const ran = [{ sequence: 's1', runDir: '/runs/s1', steps: [{ step: 1, verdict: 'ok' }] }] as unknown as Sequences;
const alarm = (extra: Partial<ExploreAlarm> = {}): ExploreAlarm => ({
  oracle: 'consistency',
  sequence: 's1',
  step: 1,
  message: 'changed, but still holds',
  ...extra,
});

test('explore exits 1 on an alarm of the controller, 0 when the only alarms show what the cluster lacks (environment)', (t) => {
  t.is(exploreExitCode({ sequences: ran, alarms: [] }), 0);
  t.is(exploreExitCode({ sequences: ran, alarms: [alarm()] }), 1);
  // zookeeper-operator's replicas changes wait on ZooKeeper, which no kperturb cluster runs.
  t.is(exploreExitCode({ sequences: ran, alarms: [alarm({ class: 'environment', why: 'it connects to ZooKeeper first' })] }), 0);
  t.is(exploreExitCode({ sequences: ran, alarms: [alarm({ class: 'environment', why: 'x' }), alarm()] }), 1);
});

test('explore exits 2 when every sequence failed to run, and 1 on a perturbation bug', (t) => {
  const failed = [
    { sequence: 's1', runDir: '/runs/s1', error: 'the controller never started', steps: [{ step: 1, verdict: 'not-run' }] },
  ] as unknown as Sequences;
  t.is(exploreExitCode({ sequences: failed, alarms: [] }), 2);
  const perturbation = { results: [{ plan: 'p', workload: 's1', pattern: 'intermediate-state', verdict: 'bug', alarms: 1, runDir: '/r' }] } as never;
  t.is(exploreExitCode({ sequences: ran, alarms: [], perturbation }), 1);
});
