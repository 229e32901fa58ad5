/**
 * The examples with planted bugs of Acto's classes (fixtures/controllers/resource-update,
 * label-removal, scale-floor, exporter-toggle, version-rollback; Go, controller-runtime): one
 * fault-free run of each variant's hand-written workload on the embedded cluster, and the bug's
 * symptom read directly from the end state: the buggy operator shows it, its fixed twin does not.
 * This pins the examples themselves; the tests at the end run `kperturb explore` on them (generated
 * operations, judged by explore's own oracles): each buggy variant found by the oracle meant for its
 * class, each fixed twin without an alarm.
 */
import type { ExecutionContext } from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { scratchDir } from '../_scratch-dir.js';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { loadConfig, type Workload } from '../../src/config/config.js';
import { executeRun } from '../../src/coordinator/run.js';
import { explore, type ExploreResults } from '../../src/campaign/explore.js';
import type { KubeObject, ObjectKey } from '../../src/model/object-key.js';
import { exampleTest, fixtureConfig } from './_campaign.js';

type Objects = Record<ObjectKey, KubeObject>;
type Variant = 'buggy' | 'fixed';

/** Runs the variant's workload (or `workload`) once without faults and returns the end state. */
async function endState(t: ExecutionContext, example: string, variant: Variant, workload?: Workload): Promise<Objects> {
  const config = loadConfig(fixtureConfig(example, variant));
  const runDir = scratchDir(t, `kperturb-e2e-${example}-${variant}-`);
  const { record, artifacts } = await executeRun({ config, workload: workload ?? [...config.workloads.values()][0]!, runDir });
  t.is(record.error, undefined);
  t.true(record.workloadOutcome.ok, `the workload failed: ${record.workloadOutcome.error ?? ''} (run in ${runDir})`);
  return artifacts.endState;
}

/** The object at `key`, failing the test when the end state lacks it. */
function object(t: ExecutionContext, objects: Objects, key: ObjectKey): Record<string, any> {
  const obj = objects[key];
  if (!obj) throw new Error(`the end state has no ${key}: ${Object.keys(objects).join(', ')}`);
  t.truthy(obj);
  return obj as Record<string, any>;
}

interface ActoExample {
  example: string;
  /** The bug, as the test titles say it. */
  symptom: string;
  /** What the end state shows of the bug. */
  observe: (t: ExecutionContext, objects: Objects) => unknown;
  /** What `observe` gives for each variant. */
  expected: Record<Variant, unknown>;
}

const examples: ActoExample[] = [
  {
    example: 'resource-update',
    symptom: 'the StatefulSet keeps the resources spec.resources had at creation',
    observe: (t, o) => object(t, o, 'StatefulSet/default/cache1').spec.template.spec.containers[0].resources,
    expected: {
      buggy: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
      fixed: { requests: { cpu: '250m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
    },
  },
  {
    example: 'label-removal',
    symptom: 'the label removed from spec.additionalLabels stays on the seed Service and the StatefulSet',
    observe: (t, o) =>
      ['Service/default/dc1-seed-service', 'StatefulSet/default/dc1'].map((key) => {
        const labels = object(t, o, key).metadata.labels ?? {};
        return { team: labels.team ?? null, tier: labels.tier ?? null };
      }),
    expected: {
      buggy: [
        { team: 'storage', tier: 'gold' },
        { team: 'storage', tier: 'gold' },
      ],
      fixed: [
        { team: 'storage', tier: null },
        { team: 'storage', tier: null },
      ],
    },
  },
  {
    example: 'scale-floor',
    symptom: 'after replicas 3 -> 1 -> 3 the StatefulSet and the ensemble stay at 1',
    observe: (t, o) => ({
      replicas: object(t, o, 'StatefulSet/default/zk1').spec.replicas,
      members: (object(t, o, 'ConfigMap/default/zk1-config').data['zoo.cfg'] as string).split('\n').filter((l) => l.startsWith('server.')).length,
      phase: object(t, o, 'Ensemble/default/zk1').status.phase,
    }),
    expected: { buggy: { replicas: 1, members: 1, phase: 'Scaling' }, fixed: { replicas: 3, members: 3, phase: 'Ready' } },
  },
  {
    example: 'exporter-toggle',
    symptom: 'the Service keeps the exporter port after spec.exporter.enabled goes false',
    observe: (t, o) => object(t, o, 'Service/default/kv1').spec.ports.map((p: { name: string; port: number }) => `${p.name}:${p.port}`),
    expected: { buggy: ['redis:6379', 'metrics:9121'], fixed: ['redis:6379'] },
  },
  {
    example: 'version-rollback',
    symptom: 'after an invalid crVersion is rolled back the cluster stays in Error with the bad version on the StatefulSet',
    observe: (t, o) => ({
      crVersion: object(t, o, 'StatefulSet/default/pxc1').spec.template.metadata.annotations['demo.kperturb.dev/cr-version'],
      phase: object(t, o, 'DBCluster/default/pxc1').status.phase,
    }),
    expected: { buggy: { crVersion: '1.11', phase: 'Error' }, fixed: { crVersion: '1.11.0', phase: 'Ready' } },
  },
];

for (const ex of examples) {
  for (const variant of ['buggy', 'fixed'] as const) {
    const title = `${ex.example} (${variant}) ${variant === 'buggy' ? 'shows' : 'does not show'} its Acto-class bug: ${ex.symptom}`;
    exampleTest(title, { go: true }, async (t) => {
      t.deepEqual(ex.observe(t, await endState(t, ex.example, variant)), ex.expected[variant]);
    });
  }
}

// The differential class: the final CR of exporter-toggle's workload, applied to a fresh cluster in
// one step, gives the buggy operator a Service without the exporter port: only the history leaves it.
exampleTest('exporter-toggle (buggy) honours the final CR applied from scratch: no exporter port', { go: true }, async (t) => {
  const seedFile = join(dirname(fixtureConfig('exporter-toggle', 'buggy')), '..', 'manifests', 'seed.yaml');
  const final = parse(readFileSync(seedFile, 'utf8')) as { spec: { exporter: { enabled: boolean } } };
  final.spec.exporter.enabled = false;
  const finalFile = join(scratchDir(t, 'kperturb-e2e-exporter-toggle-final-'), 'final.yaml');
  writeFileSync(finalFile, stringify(final));
  const objects = await endState(t, 'exporter-toggle', 'buggy', {
    name: 'apply-final',
    steps: [{ apply: finalFile }, { waitFor: { key: 'KeyValueStore/default/kv1', field: 'status.phase', equals: 'Ready', timeoutSeconds: 30 } }],
  });
  t.deepEqual(examples.find((e) => e.example === 'exporter-toggle')!.observe(t, objects), ['redis:6379']);
});

/** `kperturb explore` on a variant (seed 1, one reference run per sequence), its results. */
async function explored(t: ExecutionContext, example: string, variant: Variant, differential = false, confirmRuns = 0): Promise<ExploreResults> {
  const config = { ...loadConfig(fixtureConfig(example, variant)), referenceRuns: 1 };
  const { results } = await explore(config, {
    seed: 1,
    maxSteps: 5,
    out: scratchDir(t, `kperturb-e2e-explore-${example}-${variant}-`),
    log: () => undefined,
    differential,
    confirmRuns,
  });
  t.true(results.sequences.length > 0);
  return results;
}

// The rollback class: an invalid crVersion the fixed operator refuses (its status names the field) is
// rejected input, and the steps after it run on the rolled-back CR; the buggy one keeps the bad
// version on the StatefulSet after the rollback.
// Its alarms are one finding: the changes the stuck operator never propagates after the bad version
// (later steps of the same sequences) are follow-ons; its reproducer re-run once shows it again.
exploreVerdictTest(
  'version-rollback',
  'buggy',
  false,
  (t, results) => {
    const rollback = results.alarms.filter((a) => a.oracle === 'rollback');
    t.true(rollback.length > 0, JSON.stringify(results.alarms, null, 1));
    t.like(rollback[0], { object: 'StatefulSet/default/pxc1', expected: '1.11.0' });
    t.regex(rollback[0]!.field!, /cr-version/);
    t.deepEqual(
      results.findings.map((f) => [f.class, f.oracle, f.property, f.confirmation?.failedAgain, f.confirmation?.runs]),
      [['bug', 'rollback', 'spec.crVersion', 1, 1]],
      JSON.stringify(results.findings, null, 1),
    );
  },
  1,
);
exploreVerdictTest('version-rollback', 'fixed', false, (t, results) => {
  t.deepEqual(results.alarms, []);
  t.deepEqual(results.findings, []);
  const refused = results.sequences.flatMap((s) => s.steps).filter((s) => s.rejectedBy === 'controller');
  t.true(refused.length > 0);
  t.true(refused.every((s) => s.property === 'spec.crVersion' && /spec\.crVersion: invalid value/.test(s.rejection ?? '')));
});

// The differential class: the buggy operator keeps the exporter's port on the Service once the
// exporter goes (deleted, emptied or disabled) through the history, while the same CR created at
// once gives a Service without it. Both runs create the Service by a protobuf body, so the oracle
// knows it from the create's answer.
exploreVerdictTest('exporter-toggle', 'buggy', true, (t, results) => {
  const differential = results.alarms.filter((a) => a.oracle === 'differential');
  t.true(differential.length > 0, JSON.stringify(results.alarms, null, 1));
  t.true(differential.every((a) => a.object === 'Service/default/kv1' && /spec\.ports\[name=metrics\]/.test(a.field ?? '')));
  t.deepEqual(
    results.findings.map((f) => [f.class, f.oracle]),
    [['bug', 'differential']],
    JSON.stringify(results.findings.map((f) => f.summary)),
  );
});
exploreVerdictTest('exporter-toggle', 'fixed', true, (t, results) => t.deepEqual(results.alarms, []));

function exploreVerdictTest(
  example: string,
  variant: Variant,
  differential: boolean,
  check: (t: ExecutionContext, results: ExploreResults) => void,
  confirmRuns = 0,
): void {
  const how = differential ? 'explore --differential' : 'explore';
  const title = variant === 'buggy' ? `${how} finds ${example} (buggy)` : `${how} gives ${example} (fixed) no alarm`;
  exampleTest(title, { go: true }, async (t) => check(t, await explored(t, example, variant, differential, confirmRuns)));
}
