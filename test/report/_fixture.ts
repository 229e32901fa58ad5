/**
 * A hand-built campaign directory for the report tests: two reference runs and three test runs of
 * one workload (a bug that leaves a Secret missing, found by two plans; a pass; a plan never
 * injected), with traces, end states, logs, verdicts and results.json, as `kperturb test` lays them out.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../src/model/object-key.js';
import { RESULTS_FORMAT, type Alarm, type PlanResult, type RunRecord } from '../../src/model/results.js';
import { sharedScratchDir } from '../_scratch-dir.js';

const db = {
  apiVersion: 'demo.kperturb.dev/v1',
  kind: 'Database',
  metadata: { name: 'db1', namespace: 'default', uid: 'u-db' },
  spec: { version: '15' },
  status: { phase: 'Ready' },
};
const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'db1-config', namespace: 'default', uid: 'u-cm' }, data: { version: '15' } };
const secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db1-tls', namespace: 'default', uid: 'u-s' },
  type: 'kubernetes.io/tls',
  data: { 'tls.crt': 'Y2VydA==' },
};

function traceLines(source: 'controller' | 'cluster', events: object[]): string {
  return [{ seq: 0, ts: 1000, type: 'header', format: 'kperturb.dev/trace/v1', source }, ...events].map((e) => JSON.stringify(e)).join('\n') + '\n';
}

function writeRun(dir: string, opts: { objects: KubeObject[]; fault: boolean; plan?: string; log?: string }): void {
  mkdirSync(dir, { recursive: true });
  const record: RunRecord = {
    format: 'kperturb.dev/run/v1',
    controller: 'secret-marker-buggy',
    workload: 'create',
    ...(opts.plan ? { plan: opts.plan, injected: opts.fault } : {}),
    startedAt: '2024-01-01T00:00:00Z',
    durationMs: 2500,
    workloadOutcome: { ok: true },
    settled: true,
    controllerExits: [{ incarnation: 1, code: 0, signal: null, expected: true }],
  };
  writeFileSync(join(dir, 'run.json'), JSON.stringify(record));
  const endState: Record<string, KubeObject> = {};
  for (const o of opts.objects) endState[`${o.kind}/default/${o.metadata!.name}`] = o;
  writeFileSync(join(dir, 'end-state.json'), JSON.stringify({ format: 'kperturb.dev/end-state/v1', objects: endState }));
  let seq = 0;
  const ev = (e: object) => ({ seq: ++seq, ts: 1000 + seq * 10, ...e });
  const controller = [
    ev({ type: 'controller', action: 'start', incarnation: 1, pid: 1 }),
    ev({ type: 'workload-step', index: 0, description: 'apply database.yaml', phase: 'start' }),
    ev({ type: 'watch-event', id: 1, eventType: 'ADDED', key: 'Database/default/db1', resourceVersion: '7', object: db }),
    ev({
      type: 'request',
      id: 2,
      incarnation: 1,
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      query: {},
      verb: 'create',
      key: 'ConfigMap/default/db1-config',
      resource: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' },
    }),
    ev({ type: 'response', id: 2, status: 201, durationMs: 1 }),
    ...(opts.fault
      ? [
          ev({
            type: 'fault',
            fault: 'crash-after-write',
            phase: 'triggered',
            requestId: 2,
            detail: 'the controller creates ConfigMap/default/db1-config (1st time); holding it until it is killed',
          }),
          ev({ type: 'controller', action: 'exit', incarnation: 1, code: null, signal: 'SIGKILL' }),
          ev({ type: 'controller', action: 'start', incarnation: 2, pid: 2 }),
        ]
      : []),
    ev({ type: 'workload-step', index: 0, description: 'apply database.yaml', phase: 'done' }),
  ];
  const cluster = [
    ev({
      type: 'cluster-change',
      eventType: 'ADDED',
      key: 'Namespace/default',
      resourceVersion: '1',
      object: { kind: 'Namespace', metadata: { name: 'default' } },
    }),
  ];
  cluster[0]!.seq = 0.5; // before the controller started: folded into the setup row
  for (const o of opts.objects) {
    cluster.push(ev({ type: 'cluster-change', eventType: 'ADDED', key: `${o.kind}/default/${o.metadata!.name}`, resourceVersion: String(seq), object: o }));
  }
  writeFileSync(join(dir, 'controller.trace.jsonl'), traceLines('controller', controller));
  writeFileSync(join(dir, 'cluster.trace.jsonl'), traceLines('cluster', cluster));
  writeFileSync(join(dir, 'controller.log'), opts.log ?? '[1] started\n');
}

const missingSecret: Alarm[] = [
  {
    oracle: 'end-state',
    check: 'missing',
    object: 'Secret/default/db1-tls',
    reference: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db1-tls', namespace: 'default' } }],
    test: '<absent>',
    message: 'Secret/default/db1-tls: exists after reference runs, but is absent after the test run',
  },
  {
    oracle: 'update-summary',
    check: 'created',
    object: 'Secret/default/db1-tls',
    reference: [1],
    test: 0,
    message: 'Secret/default/db1-tls: created 1 time(s) in reference runs, but 0 time(s) in the test run',
  },
];

export interface CampaignFixture {
  out: string;
  root: string;
  results: PlanResult[];
  resultsFile: string;
}

export function makeCampaign(): CampaignFixture {
  const out = sharedScratchDir('kperturb-report-');
  const root = join(out, 'secret-marker-buggy');
  const refs = [1, 2].map((n) => join(root, 'learn', 'create', `ref-${n}`));
  for (const r of refs) writeRun(r, { objects: [db, cm, secret], fault: false });
  const result = (plan: string, description: string, verdict: PlanResult['verdict'], alarms: Alarm[], extra: Partial<PlanResult> = {}): PlanResult => ({
    plan,
    controller: 'secret-marker-buggy',
    workload: 'create',
    pattern: 'intermediate-state',
    description,
    verdict,
    injected: verdict !== 'not-injected',
    alarms,
    durationMs: 2500,
    runDir: join(root, 'test', 'create', plan),
    referenceRunDirs: refs,
    ...extra,
  });
  const results = [
    result('intermediate-0001', 'restart the controller right after it creates ConfigMap/default/db1-config (1st time)', 'bug', missingSecret),
    result('intermediate-0002', 'restart the controller right after it patches Database/default/db1 status (1st time) <&>"', 'bug', missingSecret),
    result('intermediate-0003', 'restart the controller right after it creates Secret/default/db1-tls (1st time)', 'pass', []),
    result('intermediate-0004', 'restart the controller right after it deletes ConfigMap/default/db1-config (1st time)', 'not-injected', [], {
      error: "the plan's trigger never matched during the run, so nothing was tested",
    }),
  ];
  for (const r of results) {
    writeRun(r.runDir, { objects: r.verdict === 'bug' ? [db, cm] : [db, cm, secret], fault: r.verdict !== 'not-injected', plan: r.plan });
    writeFileSync(join(r.runDir, 'verdict.json'), JSON.stringify(r, null, 2));
  }
  const resultsFile = join(root, 'results.json');
  writeFileSync(resultsFile, JSON.stringify({ format: RESULTS_FORMAT, results, complete: true, planned: results.length }, null, 2));
  return { out, root, results, resultsFile };
}
