/**
 * A campaign on the real control plane with and without the ControlPlanePool (src/realcluster/pool.ts),
 * in one run: per-plan wall time, where it goes (run.json phasesMs), and every plan's verdicts in both
 * modes, so a speed-up that changes verdicts shows. A script that prints numbers, not a test.
 *
 * It learns an example once on the real control plane (reference runs), plans it, picks the first
 * PER plans of each pattern, and then runs that set ROUNDS times per mode through the campaign API
 * (`test()`, as `kperturb test --real` does), alternating the modes' order each round so drift in the
 * machine's load falls on both. "pool off" is `cluster: { kind: 'real', pool: false }`: a control
 * plane started per plan, after the previous one stopped.
 *
 *   npm run build && node dist/test/bench/real-campaign.bench.js [--rounds 2] [--per 2] [--example decommission] [--pattern stale-state]
 *     [--out DIR --plans stale-0001,stale-0050]   (an existing campaign of the example: its reference runs and these plans)
 *   npm run bench:real-campaign
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/config.js';
import { learn, loadPlans, plan, test } from '../../src/campaign/campaign.js';
import type { ClusterChoice } from '../../src/coordinator/run.js';
import type { PlanResult, RunPhase, RunRecord } from '../../src/model/results.js';
import type { TestPlan } from '../../src/model/plan.js';
import { median } from './_stats.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('--rounds') ?? 2);
const PER = Number(arg('--per') ?? 2);
const EXAMPLE = arg('--example') ?? 'decommission';
/** Only this pattern's plans (e.g. stale-state, the most timing-sensitive), for more rounds in the same time. */
const PATTERN = arg('--pattern');
/** An existing campaign directory (learned and planned for the example): no learning, its plans. */
const CAMPAIGN = arg('--out');
/** These plans by name (comma-separated) instead of the first PER of each pattern. */
const NAMES = arg('--plans')?.split(',');
const SHOWN_PHASES: RunPhase[] = ['cluster', 'setup', 'controllerStart', 'workload', 'settle', 'teardown'];

type Mode = 'pool off' | 'pool on';
const MODES: Record<Mode, ClusterChoice> = { 'pool off': { kind: 'real', pool: false }, 'pool on': { kind: 'real' } };

const progress = (line: string) => process.stderr.write(`${line}\n`);
const quiet = () => undefined;

const out = CAMPAIGN ?? mkdtempSync(join(tmpdir(), 'kperturb-bench-real-campaign-'));
try {
  const config = loadConfig(join(ROOT, 'fixtures', 'controllers', EXAMPLE, 'buggy', 'kperturb.yaml'));
  if (!CAMPAIGN) {
    progress(`learning ${config.name} on the real control plane (${config.referenceRuns} reference runs) ...`);
    await learn(config, { out, log: quiet, cluster: { kind: 'real' } });
  }
  const planned = CAMPAIGN ? loadPlans([join(out, config.name, 'plans')]) : (await plan(config, { out, log: quiet })).flatMap((s) => s.plans);
  const picked: TestPlan[] = NAMES ? planned.filter((p) => NAMES.includes(p.metadata.name)) : [];
  for (const pattern of NAMES ? [] : new Set(planned.map((p) => p.spec.pattern).filter((p) => PATTERN === undefined || p === PATTERN))) {
    picked.push(...planned.filter((p) => p.spec.pattern === pattern).slice(0, PER));
  }
  progress(`${picked.length} plans (${NAMES ? NAMES.join(', ') : `${PER} of each pattern`}), ${ROUNDS} round(s) per mode`);

  const perPlanMs: Record<Mode, number[]> = { 'pool off': [], 'pool on': [] };
  const phases: Record<Mode, Partial<Record<RunPhase, number[]>>> = { 'pool off': {}, 'pool on': {} };
  const verdicts = new Map<string, Record<Mode, string[]>>();
  for (let round = 0; round < ROUNDS; round++) {
    const order: Mode[] = round % 2 === 0 ? ['pool off', 'pool on'] : ['pool on', 'pool off'];
    for (const mode of order) {
      const started = Date.now();
      const results: PlanResult[] = await test(config, picked, { out, log: quiet, cluster: MODES[mode], rerun: true });
      const wall = Date.now() - started;
      perPlanMs[mode].push(wall / picked.length);
      for (const r of results) {
        const record = JSON.parse(readFileSync(join(r.runDir, 'run.json'), 'utf8')) as RunRecord;
        for (const phase of SHOWN_PHASES) (phases[mode][phase] ??= []).push(record.phasesMs?.[phase] ?? 0);
        const v = verdicts.get(r.plan) ?? { 'pool off': [], 'pool on': [] };
        v[mode].push(r.verdict + (r.alarms.length > 0 ? `(${r.alarms.length})` : ''));
        verdicts.set(r.plan, v);
      }
      progress(`round ${round + 1}/${ROUNDS} ${mode}: ${(wall / 1000).toFixed(1)} s for ${picked.length} plans`);
    }
  }

  const fmt = (ms: number) => (ms / 1000).toFixed(2).padStart(7);
  process.stdout.write(`\n${config.name}: ${picked.length} plans x ${ROUNDS} round(s) per mode, medians in s\n`);
  process.stdout.write(`${'mode'.padEnd(9)}  ${'per plan'.padStart(8)}  ${SHOWN_PHASES.map((p) => p.padStart(16)).join('')}\n`);
  for (const mode of Object.keys(MODES) as Mode[]) {
    const cells = SHOWN_PHASES.map((p) => fmt(median(phases[mode][p] ?? [])).padStart(16)).join('');
    process.stdout.write(`${mode.padEnd(9)}  ${fmt(median(perPlanMs[mode])).padStart(8)}  ${cells}\n`);
  }
  const ratio = median(perPlanMs['pool on']) / median(perPlanMs['pool off']);
  process.stdout.write(`per plan (campaign wall time / plans), pool on / pool off: ${ratio.toFixed(2)}\n\n`);

  process.stdout.write('verdicts per round (pass/bug, alarms in brackets):\n');
  let differing = 0;
  for (const [name, v] of verdicts) {
    const same = [...v['pool off'], ...v['pool on']].every((x) => x === v['pool off'][0]);
    if (!same) differing++;
    process.stdout.write(`  ${name.padEnd(18)} off: ${v['pool off'].join(' ').padEnd(24)} on: ${v['pool on'].join(' ')}${same ? '' : '   <- differs'}\n`);
  }
  process.stdout.write(`${differing} of ${verdicts.size} plans had differing verdicts across rounds or modes\n`);
} finally {
  if (!CAMPAIGN) rmSync(out, { recursive: true, force: true });
}
