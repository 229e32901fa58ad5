/**
 * The cross-check of issue 8: the embedded cluster against a real control plane (etcd,
 * kube-apiserver, kube-controller-manager, with simulated kubelets), with every example controller
 * of fixtures/controllers/ (buggy and fixed). Per variant:
 *
 * 1. learn on the embedded cluster and on the real one (two reference runs each), plan from the
 *    embedded reference runs;
 * 2. run the SAME selected plans on both clusters (a fresh cluster per run on both), judge each
 *    embedded run against the embedded references and each real run against the real references,
 *    and assert the same verdict per plan. On a mismatch it prints both runs' alarms and the
 *    end-state/update differences between the two test runs (`kperturb diff` machinery).
 *    The real runs are also judged against the embedded references (the strictest fidelity check:
 *    every difference between the clusters' end states alarms); that agreement is logged, not
 *    asserted, because the real control plane's own objects (APIServices, bootstrap RBAC,
 *    FlowSchemas, PriorityClasses, kube-root-ca.crt ConfigMaps), which the embedded cluster does not
 *    have, alarm in every such comparison (`kperturb diff` between the two runs lists them).
 *
 * Budget: the whole real tier must stay under about 25 minutes on a 2-core machine, so each variant
 * runs one plan per pattern: for the planted bug's pattern every plan the e2e tests' `catchingPlan`
 * matches (else the first of their preferred/relevant selection, `plansToRun`), for the other
 * patterns the first plan of that selection. Verdicts must agree for every plan injected on both
 * clusters, and the buggy variant's bug must be caught on both. A plan injected on one cluster only
 * fails the test when its trigger did not match on the other (a change the embedded cluster's
 * simulated controllers make in a shape the real ones do not), and is only reported when every
 * trigger matched there but the fault had nothing to act on (an unobserved-state hold whose object
 * the controller was not watching yet: timing, not fidelity). `kperturb demo --all --real` runs everything.
 *
 * A last pair of tests runs one example (decommission, the one with most objects: StatefulSet, pods,
 * claims, volumes) on an existing cluster (`--kubeconfig`: one shared real control plane): the same
 * verdicts again, and after every run nothing the run created is left on the cluster.
 * The final test logs the figures: control plane start time, isolation cost per run, median wall
 * time per plan on each cluster, and the verdict agreement rates.
 */
import test, { type ExecutionContext } from 'ava';
import { kubeconfigSource } from '../../src/kube/kubeconfig-source.js';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type ControllerUnderTest } from '../../src/config/config.js';
import { learn, plan, test as runPlans } from '../../src/campaign/campaign.js';
import { CampaignLayout } from '../../src/campaign/layout.js';
import { CLUSTER_RECORD_FILE, type ClusterChoice, type ClusterRunRecord } from '../../src/coordinator/run.js';
import { faultSimulated, PATTERNS, type Pattern, type TestPlan } from '../../src/model/plan.js';
import type { PlanResult, RunRecord, Verdict } from '../../src/model/results.js';
import { RUN_FILES } from '../../src/io/run-files.js';
import { judgeTestRun, type OracleOptions } from '../../oracles/index.js';
import { loadRunDir } from '../../src/io/run-dir.js';
import { diffRuns, renderRunDiff } from '../../src/report/run-diff.js';
import { KubeClient } from '../../src/kube/client.js';
import { locateControlPlaneBinaries, RealCluster, type ControlPlaneBinaries } from '../../src/realcluster/index.js';
import { buildGoFixtures, fixtureConfig, goMissingReason, plansToRun } from '../e2e/_campaign.js';
import { clusterInventory, median, waitForBootstrapObjects } from './_helpers.js';
import { scratchDir, sharedScratchDir } from '../_scratch-dir.js';

/** The examples and their planted bugs, as in test/e2e/<example>.test.ts. */
interface ExampleSpec {
  example: string;
  go?: boolean;
  pattern: Pattern;
  involved: string[];
  prefer?: RegExp;
  catchingPlan?: RegExp;
}

const EXAMPLES: ExampleSpec[] = [
  {
    example: 'secret-marker',
    pattern: 'intermediate-state',
    involved: ['Secret/default/db1-tls'],
    catchingPlan: /patches Database\/default\/db1 status \(1st time\)/,
  },
  {
    example: 'volume-resize',
    go: true,
    pattern: 'intermediate-state',
    involved: ['PersistentVolumeClaim/default/persistence-b1-server-0'],
    catchingPlan: /updates Broker\/default\/b1 status/,
  },
  {
    example: 'stale-deletion',
    go: true,
    pattern: 'stale-state',
    involved: ['StatefulSet/default/mc1-rs0', 'PersistentVolumeClaim/default/mongod-data-mc1-rs0-0'],
    prefer: /view frozen right after MongoCluster\/default\/mc1 is updated \(metadata\.deletionGracePeriodSeconds: undefined -> 0, metadata\.deletionTimestamp/,
  },
  {
    example: 'component-toggle',
    go: true,
    pattern: 'stale-state',
    involved: ['StatefulSet/default/c1-haproxy', 'Service/default/c1-haproxy'],
    prefer: /view frozen right after SQLCluster\/default\/c1 is updated \(spec\.haproxy\.enabled: true -> false\)/,
  },
  {
    example: 'decommission',
    pattern: 'unobserved-state',
    involved: ['PersistentVolumeClaim/default/data-dc1-1', 'Pod/default/dc1-1'],
    prefer: /hide every change of Pod\/default\/dc1-1/,
    // Of the 20 holds, those that hide the pod's termination: from its creation until its deletion,
    // and Sieve's (from its deletionTimestamp until the grace period goes to 0). The first hold of
    // the pod by `prefer` alone now hides a window the operator does not need to see.
    catchingPlan:
      /hide every change of Pod\/default\/dc1-1 from the controller from when Pod\/default\/dc1-1 is (created \(1st time\) until Pod\/default\/dc1-1 is deleted|updated \(metadata\.deletionGracePeriodSeconds: undefined -> 30)/,
  }, // The lost answer of the copy's create: the API server applied it, so the retry makes a second copy.
  {
    example: 'snapshot-copy',
    go: true,
    pattern: 'error-path',
    involved: ['ConfigMap/default/s1-*'],
    catchingPlan: /lost response .* creates ConfigMap\/default\/s1-\*#1/,
  },
  // The store's 503 to the upgrade call, which the buggy operator ignores (a stub application on the
  // pod's loopback address; the real control plane's pods get one too).
  {
    example: 'app-upgrade',
    go: true,
    pattern: 'managed-system',
    involved: ['KVStore/default/kv1', 'Pod/default/kv1-0'],
    catchingPlan: /when the controller calls kvstore on Pod\/default\/kv1-0 \(POST \/upgrade\) \(2nd time\)/,
  },
  // The engine's 503 to the settings call after the spec change: the buggy operator never sends
  // them again.
  {
    example: 'app-settings',
    go: true,
    pattern: 'managed-system',
    involved: ['SearchIndex/default/idx1', 'Pod/default/idx1-0'],
    catchingPlan: /when the controller calls search on Pod\/default\/idx1-0 \(PUT \/idx1\/_settings\) \(2nd time\)/,
  },
  // OAT's schedule: one member's containers crash-loop during the spec change; the buggy operator
  // deletes every pod of the group.
  {
    example: 'crash-restart',
    go: true,
    pattern: 'managed-system',
    involved: ['Pod/default/rg1-0', 'Pod/default/rg1-1', 'Pod/default/rg1-2'],
    catchingPlan: /crash-loop the containers of Pod\/default\/rg1-\d/,
  },
];

/** One plan per pattern; for the bug's pattern, every plan that may catch it (`catchingPlan`). */
/**
 * The plans to cross-check, per pattern: the candidates for the catching plan, else one plan, taken
 * among those the real cluster's reference runs give too (`onBoth`: the same faults planned from
 * its own learn) when there are any. A plan whose triggers come in another order on the real
 * control plane (the embedded cluster binds a claim before the scheduler retries the pod; a real
 * kube-controller-manager after) cannot be injected there, and comparing its verdicts says nothing.
 */
function selectPlans(plans: TestPlan[], spec: ExampleSpec, onBoth: (p: TestPlan) => boolean): TestPlan[] {
  const selected: TestPlan[] = [];
  for (const pattern of PATTERNS) {
    const ofPattern = plans.filter((p) => p.spec.pattern === pattern);
    if (ofPattern.length === 0) continue;
    // Every candidate for the catching plan (e.g. each of the status updates it may follow): which
    // one catches the bug depends on the run.
    const catching = pattern === spec.pattern && spec.catchingPlan ? ofPattern.filter((p) => spec.catchingPlan!.test(p.spec.description)) : [];
    const common = ofPattern.filter(onBoth);
    selected.push(...(catching.length > 0 ? catching : [plansToRun(common.length > 0 ? common : ofPattern, spec.involved, spec.prefer)[0]!]));
  }
  return selected;
}

const quiet = () => undefined;

interface Prepared {
  config: ControllerUnderTest;
  embeddedOut: string;
  realOut: string;
  plans: TestPlan[];
}

interface PlanOutcome {
  label: string;
  embedded: Verdict;
  real: Verdict;
  /** The real run judged against the embedded reference runs. */
  realVsEmbeddedRefs: Verdict;
  existing?: Verdict;
  embeddedResult: PlanResult;
}

const figures = {
  /** Wall time of each test run (cluster start/stop or cleanup included), per cluster. */
  planMs: { embedded: [] as number[], real: [] as number[], existing: [] as number[] },
  /** Per run: starting and stopping the real control plane (incl. the simulated kubelets). */
  realStartMs: [] as number[],
  realStopMs: [] as number[],
  /** Per run on the existing cluster: deleting what the run created. */
  existingCleanupMs: [] as number[],
  outcomes: [] as PlanOutcome[],
  /** Plans whose triggers matched on both clusters but whose hold had nothing to act on on one of them. */
  notTransferred: [] as string[],
};

let binaries: ControlPlaneBinaries;
const goMissing = goMissingReason();

test.before(() => {
  binaries = locateControlPlaneBinaries();
  if (!goMissing) buildGoFixtures();
});

function oracleOptions(config: ControllerUnderTest, workload: string): OracleOptions {
  const forWorkload = (rules: ControllerUnderTest['masks']) =>
    rules.filter((m) => !m.workload || m.workload === workload).map((m) => ({ keyGlob: m.key, paths: m.paths }));
  return { extraMasks: forWorkload(config.masks), countUpdates: forWorkload(config.countUpdates ?? []) };
}

async function learnOn(t: ExecutionContext, config: ControllerUnderTest, out: string, cluster: ClusterChoice): Promise<void> {
  const learned = await learn(config, { out, log: quiet, cluster });
  const failed = learned.flatMap((l) => l.runs).filter((r) => !r.ok);
  t.deepEqual(failed, [], `reference runs of ${config.name} on the ${cluster.kind} cluster failed`);
  if (failed.length > 0) throw new Error(`reference runs failed on the ${cluster.kind} cluster`);
}

function clusterRecord(runDir: string): ClusterRunRecord {
  return JSON.parse(readFileSync(join(runDir, CLUSTER_RECORD_FILE), 'utf8')) as ClusterRunRecord;
}

/** The verdict of a test run judged against the reference runs of another campaign directory. */
async function verdictAgainst(config: ControllerUnderTest, result: PlanResult, referencesOut: string): Promise<Verdict> {
  const layout = new CampaignLayout(referencesOut, config.name);
  const refs = await Promise.all(Array.from({ length: config.referenceRuns }, (_, i) => loadRunDir(layout.referenceRun(result.workload, i + 1))));
  const run = await loadRunDir(result.runDir);
  return judgeTestRun(
    refs.map((r) => r.artifacts),
    run.artifacts,
    run.record,
    oracleOptions(config, result.workload),
  ).verdict;
}

/**
 * Why a run's faults were not injected: the details of its `not-injected` fault events, and whether
 * every trigger matched all the same (only an unobserved-state hold found no controller stream).
 */
function notInjectedWhy(runDir: string): { details: string[]; triggersMatched: boolean } {
  const details: string[] = [];
  for (const line of readFileSync(join(runDir, 'controller.trace.jsonl'), 'utf8').split('\n')) {
    if (!line.includes('"not-injected"')) continue;
    const e = JSON.parse(line) as { type?: string; phase?: string; detail?: string };
    if (e.type === 'fault' && e.phase === 'not-injected') details.push(e.detail ?? '');
  }
  return { details, triggersMatched: details.length > 0 && details.every((d) => d.endsWith('(no controller stream had an event of it to hold)')) };
}

/** Both runs' alarms and the differences between them, for a verdict mismatch. */
async function describeMismatch(a: PlanResult, aName: string, b: PlanResult, bName: string): Promise<string> {
  const alarms = (r: PlanResult) => (r.alarms.length === 0 ? '  (no alarms)' : r.alarms.map((x) => `  [${x.oracle}] ${x.message}`).join('\n'));
  let diff: string;
  try {
    // Only objects both runs have: each cluster's own objects (the real control plane's bootstrap
    // RBAC, APIServices, FlowSchemas...) differ in every pair of runs and would drown the rest.
    const d = await diffRuns(a.runDir, b.runDir);
    const both = (x: { object: string }) =>
      !/ is absent in | exists in |with this generated name|created 0 time|created 1 time\(s\) in the reference run, but 0/.test(JSON.stringify(x));
    const omitted = d.endState.length + d.updateSummary.length;
    d.endState = d.endState.filter(both);
    d.updateSummary = d.updateSummary.filter(both);
    diff = renderRunDiff(d) + `\n(${omitted - d.endState.length - d.updateSummary.length} differences about objects only one of the runs has are left out)`;
  } catch (err) {
    diff = `(no diff: ${(err as Error).message})`;
  }
  return [
    `${a.plan} (${a.description}): ${aName} ${a.verdict}${a.error ? ` (${a.error})` : ''}, ${bName} ${b.verdict}${b.error ? ` (${b.error})` : ''}`,
    `${aName} run alarms (${a.runDir}):`,
    alarms(a),
    `${bName} run alarms (${b.runDir}):`,
    alarms(b),
    `differences between the two test runs (${aName} as reference):`,
    diff,
  ].join('\n');
}

const prepared = new Map<string, Promise<Prepared>>();

for (const spec of EXAMPLES) {
  for (const variant of ['buggy', 'fixed'] as const) {
    const name = `${spec.example} (${variant})`;
    if (spec.go && goMissing) {
      test.skip(`${name}: ${goMissing}`, () => undefined);
      continue;
    }

    test.serial(`${name}: learns on the embedded and the real cluster, plans`, async (t) => {
      const work = (async (): Promise<Prepared> => {
        const config = loadConfig(fixtureConfig(spec.example, variant));
        const embeddedOut = sharedScratchDir(`kperturb-xcheck-${spec.example}-${variant}-embedded-`);
        const realOut = sharedScratchDir(`kperturb-xcheck-${spec.example}-${variant}-real-`);
        await learnOn(t, config, embeddedOut, { kind: 'embedded' });
        await learnOn(t, config, realOut, { kind: 'real', binaries });
        const summaries = await plan(config, { out: embeddedOut, log: quiet });
        // The real learn planned aside (its plans are not the ones run), for what both give.
        const realPlanned = scratchDir(t, `kperturb-xcheck-${spec.example}-${variant}-realplans-`);
        cpSync(realOut, realPlanned, { recursive: true });
        const realFaults = new Set((await plan(config, { out: realPlanned, log: quiet })).flatMap((s) => s.plans.map((p) => JSON.stringify(p.spec.faults))));
        const plans = selectPlans(
          summaries.flatMap((s) => s.plans),
          spec,
          (p) => realFaults.has(JSON.stringify(p.spec.faults)),
        );
        t.log(
          `${summaries.reduce((n, s) => n + s.plans.length, 0)} plans; cross-checking ${plans.map((p) => `${p.metadata.name} (${p.spec.pattern})`).join(', ')}`,
        );
        t.true(
          plans.some((p) => p.spec.pattern === spec.pattern),
          `no ${spec.pattern} plan was generated`,
        );
        return { config, embeddedOut, realOut, plans };
      })();
      prepared.set(name, work);
      await work;
    });

    test.serial(`${name}: the same verdict per plan on the embedded and the real cluster`, async (t) => {
      const p = prepared.get(name);
      if (!p) return t.fail('not prepared');
      const { config, embeddedOut, realOut, plans } = await p;
      const embedded = await runPlans(config, plans, { out: embeddedOut, log: quiet });
      const real = await runPlans(config, plans, { out: realOut, log: quiet, cluster: { kind: 'real', binaries } });
      const mismatches: string[] = [];
      for (const [i, e] of embedded.entries()) {
        const r = real[i]!;
        const realVsEmbeddedRefs = await verdictAgainst(config, r, embeddedOut);
        figures.outcomes.push({ label: `${config.name}/${e.plan}`, embedded: e.verdict, real: r.verdict, realVsEmbeddedRefs, embeddedResult: e });
        figures.planMs.embedded.push(e.durationMs);
        figures.planMs.real.push(r.durationMs);
        const rec = clusterRecord(r.runDir);
        if (rec.startMs !== undefined) figures.realStartMs.push(rec.startMs);
        if (rec.stopMs !== undefined) figures.realStopMs.push(rec.stopMs);
        t.log(
          `${e.plan} (${e.pattern}): embedded ${e.verdict} in ${(e.durationMs / 1000).toFixed(1)} s, real ${r.verdict} in ${(r.durationMs / 1000).toFixed(1)} s (against the embedded references: ${realVsEmbeddedRefs})`,
        );
        if (e.verdict !== r.verdict) {
          const text = await describeMismatch(e, 'embedded', r, 'real');
          // Injected on one cluster only: a mismatch if a trigger did not match on the other (a change
          // shaped differently there); reported only if the triggers matched and an unobserved-state
          // hold found no stream to hold (the controller was not watching the object yet).
          const notInjected = e.verdict === 'not-injected' ? e : r.verdict === 'not-injected' ? r : undefined;
          const why = notInjected ? notInjectedWhy(notInjected.runDir) : undefined;
          if (notInjected && why?.triggersMatched) {
            figures.notTransferred.push(`${config.name}/${e.plan}`);
            t.log(
              `triggers matched on both clusters, but on the ${notInjected === e ? 'embedded' : 'real'} one the hold had nothing to act on: ${why.details.join('; ')}\n${text}`,
            );
          } else mismatches.push(why ? `${text}\nnot injected on the ${notInjected === e ? 'embedded' : 'real'} cluster: ${why.details.join('; ')}` : text);
        } else if (realVsEmbeddedRefs !== e.verdict)
          t.log(`  judged against the embedded references, the real run alarms; see \`kperturb diff ${e.runDir} ${r.runDir}\``);
      }
      for (const m of mismatches) t.log(m);
      const comparable = (i: number) => !figures.notTransferred.includes(`${config.name}/${embedded[i]!.plan}`);
      t.deepEqual(
        real.filter((_, i) => comparable(i)).map((r) => `${r.plan}: ${r.verdict}`),
        embedded.filter((_, i) => comparable(i)).map((e) => `${e.plan}: ${e.verdict}`),
        'verdicts per plan, real vs embedded (except holds that had nothing to act on on one cluster)',
      );
      // The planted bug's catching plan must transfer: it is what the cross-check is for.
      if (variant === 'buggy')
        t.true(
          embedded.some((e, i) => e.verdict === 'bug' && real[i]!.verdict === 'bug'),
          'the planted bug is caught on both clusters',
        );
    });
  }
}

/** The example run on an existing cluster; it shares the embedded runs of its cross-check above. */
const EXISTING_EXAMPLE = 'decommission (buggy)';
let existing: RealCluster | undefined;

test.after.always(async () => {
  await existing?.stop();
});

test.serial(`${EXISTING_EXAMPLE} on an existing cluster (--kubeconfig): the same verdicts, and nothing a run created is left behind`, async (t) => {
  const p = prepared.get(EXISTING_EXAMPLE);
  if (!p) return t.fail('not prepared');
  const { config, plans } = await p;
  existing = await RealCluster.start({ binaries });
  const kubeconfig = join(sharedScratchDir('kperturb-xcheck-existing-'), 'kubeconfig');
  writeFileSync(kubeconfig, existing.kubeconfigYaml(), { mode: 0o600 });
  const client = new KubeClient(existing.url, existing.clientOptions());
  t.teardown(() => client.close());
  const cluster: ClusterChoice = { kind: 'existing', kubeconfig: kubeconfigSource({ kubeconfig }) };
  const out = sharedScratchDir('kperturb-xcheck-existing-out-');

  await waitForBootstrapObjects(client);
  const before = await clusterInventory(client);
  await learnOn(t, config, out, cluster);
  const results = await runPlans(config, plans, { out, log: quiet, cluster });
  const after = await clusterInventory(client);
  const leftBehind = [...after].filter((k) => !before.has(k));
  const removed = [...before].filter((k) => !after.has(k));
  t.deepEqual(leftBehind, [], 'objects created by the runs and still on the cluster');
  t.deepEqual(removed, [], 'objects that existed before the runs and were deleted');

  const layout = new CampaignLayout(out, config.name);
  const runDirs = [
    ...Array.from({ length: config.referenceRuns }, (_, i) => layout.referenceRun(plans[0]!.spec.workload, i + 1)),
    ...results.map((r) => r.runDir),
  ];
  for (const dir of runDirs) {
    const rec = clusterRecord(dir);
    t.deepEqual(rec.cleanup?.leftovers, [], `${dir}: cleanup leftovers`);
    if (rec.cleanup) {
      figures.existingCleanupMs.push(rec.cleanup.durationMs);
      t.log(
        `${dir}: cleanup of ${rec.cleanup.objects} object(s) in ${rec.cleanup.durationMs} ms${rec.cleanup.finalizersRemoved.length ? `; finalizers removed: ${rec.cleanup.finalizersRemoved.join(', ')}` : ''}`,
      );
    }
  }
  const embeddedResults = new Map(figures.outcomes.filter((o) => o.label.startsWith(`${config.name}/`)).map((o) => [o.label, o]));
  for (const r of results) {
    figures.planMs.existing.push(r.durationMs);
    const o = embeddedResults.get(`${config.name}/${r.plan}`);
    if (o) o.existing = r.verdict;
    t.log(`${r.plan}: existing ${r.verdict} in ${(r.durationMs / 1000).toFixed(1)} s (embedded ${o?.embedded ?? '?'})`);
    if (o && o.embedded !== r.verdict) t.log(await describeMismatch(o.embeddedResult, 'embedded', r, 'existing'));
  }
  // A fault of the simulated managed system (a claim kept Pending, a node not ready) cannot act on
  // a cluster whose kubelets and volumes are not kperturb's: not injected, and the run says why.
  const needsSimulation = (planName: string) => plans.find((p) => p.metadata.name === planName)?.spec.faults.some((f) => faultSimulated(f) !== undefined);
  for (const r of results.filter((x) => needsSimulation(x.plan))) {
    const record = JSON.parse(readFileSync(join(r.runDir, RUN_FILES.record), 'utf8')) as RunRecord;
    t.regex(record.notInjected?.join('\n') ?? '', /needs the embedded cluster or --real/, `${r.plan}: why its fault was not injected`);
  }
  t.deepEqual(
    results.map((r) => `${r.plan}: ${r.verdict}`),
    results.map(
      (r) => `${r.plan}: ${needsSimulation(r.plan) ? 'not-injected' : (embeddedResults.get(`${config.name}/${r.plan}`)?.embedded ?? '(no embedded run)')}`,
    ),
    'verdicts per plan, existing vs embedded (not-injected for a fault of the simulated managed system)',
  );
});

test.serial('figures: start time, isolation cost, wall time per plan, verdict agreement', (t) => {
  const seconds = (ms: number | undefined) => (ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(1)} s`);
  const o = figures.outcomes;
  const agree = (f: (x: PlanOutcome) => boolean, of: PlanOutcome[] = o) =>
    `${of.filter(f).length}/${of.length}${of.length ? ` (${Math.round((100 * of.filter(f).length) / of.length)}%)` : ''}`;
  const withExisting = o.filter((x) => x.existing !== undefined);
  const lines = [
    `plans cross-checked: ${o.length}`,
    `verdict agreement, embedded vs real (each judged against its own cluster's reference runs): ${agree((x) => x.embedded === x.real)}`,
    `  of the plans injected on both clusters: ${agree(
      (x) => x.embedded === x.real,
      o.filter((x) => x.embedded !== 'not-injected' && x.real !== 'not-injected'),
    )}; injected on one cluster only, the other's triggers matched but its hold found no stream: ${figures.notTransferred.length} (${figures.notTransferred.join(', ') || 'none'})`,
    `verdict agreement, embedded vs real judged against the embedded reference runs: ${agree((x) => x.embedded === x.realVsEmbeddedRefs)}`,
    `verdict agreement, embedded vs existing cluster: ${agree((x) => x.embedded === x.existing, withExisting)}`,
    `median wall time per plan: embedded ${seconds(median(figures.planMs.embedded))}, real ${seconds(median(figures.planMs.real))}, existing ${seconds(median(figures.planMs.existing))}`,
    `real control plane per run: start ${seconds(median(figures.realStartMs))} (median), stop ${seconds(median(figures.realStopMs))}`,
    `existing cluster cleanup per run: ${seconds(median(figures.existingCleanupMs))} (median, max ${seconds(figures.existingCleanupMs.length ? Math.max(...figures.existingCleanupMs) : undefined)})`,
  ];
  for (const line of lines) t.log(line);
  for (const x of o)
    t.log(`  ${x.label}: embedded ${x.embedded}, real ${x.real}, real vs embedded refs ${x.realVsEmbeddedRefs}${x.existing ? `, existing ${x.existing}` : ''}`);
  t.true(o.length > 0, 'no plan was cross-checked');
});
