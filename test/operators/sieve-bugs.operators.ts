/**
 * The real-operator tier (`npm run test:operators`, not part of `npm test`): every reproduction of a
 * Sieve bug listed in fixtures/operators/reproductions.yaml still reproduces with the plan kperturb
 * generates. Per operator and workload it learns and plans once (in a fresh directory), finds the
 * generated plan with the listed faults, and tests it; the operators are built by
 * `npm run setup:operators` (the npm script runs it first). A reproduction marked `real: true` (an
 * operator that needs no API the current Kubernetes release stopped serving) is checked on a fresh
 * real control plane per run too (`--real`; the npm script builds it first, a no-op when built).
 */
import test from 'ava';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { loadConfig, type ControllerUnderTest } from '../../src/config/config.js';
import { learn, plan, test as runPlans } from '../../src/campaign/campaign.js';
import type { TestPlan } from '../../src/model/plan.js';
import type { PlanResult } from '../../src/model/results.js';
import type { ClusterChoice } from '../../src/coordinator/run.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const quiet = () => undefined;

interface Reproduction {
  bug: string;
  operator: string;
  workload: string;
  pattern: TestPlan['spec']['pattern'];
  faults: unknown[];
  symptom: string[];
  attempts?: number;
  /** Also on the real control plane. */
  real?: boolean;
}

const reproductions = parse(readFileSync(join(repoRoot, 'fixtures', 'operators', 'reproductions.yaml'), 'utf8')) as Reproduction[];

/** Does `actual` contain `expected` (objects: every key given, recursively; arrays: item by item)? */
function contains(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) return Array.isArray(actual) && expected.length <= actual.length && expected.every((e, i) => contains(actual[i], e));
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([k, v]) => contains((actual as Record<string, unknown>)[k], v));
  }
  return actual === expected;
}

// One campaign (learn + plan) per operator and workload, shared by the reproductions that need it.
const campaigns = new Map<string, Promise<{ config: ControllerUnderTest; out: string; cluster: ClusterChoice; plans: TestPlan[] }>>();
function campaign(operator: string, workload: string, cluster: ClusterChoice) {
  const id = `${operator}/${workload} on ${cluster.kind}`;
  let c = campaigns.get(id);
  if (!c) {
    c = (async () => {
      const config = loadConfig(join(repoRoot, 'fixtures', 'operators', operator, 'kperturb.yaml'));
      const out = mkdtempSync(join(tmpdir(), `kperturb-operators-${operator}-${workload}-${cluster.kind}-`));
      const learned = await learn(config, { out, log: quiet, workloads: [workload], cluster });
      const failed = learned.flatMap((l) => l.runs).filter((r) => !r.ok);
      if (failed.length > 0) throw new Error(`reference runs of ${id} failed: ${failed.map((f) => `${f.error} (${f.dir})`).join('; ')}`);
      const [planned] = await plan(config, { out, log: quiet, workloads: [workload] });
      return { config, out, cluster, plans: planned!.plans };
    })();
    campaigns.set(id, c);
  }
  return c;
}

const docs = readFileSync(join(repoRoot, 'docs', 'sieve-bugs.md'), 'utf8');

const clusters = (r: Reproduction): ClusterChoice[] => (r.real ? [{ kind: 'embedded' }, { kind: 'real' }] : [{ kind: 'embedded' }]);

for (const r of reproductions)
  for (const choice of clusters(r)) {
    const where = choice.kind === 'real' ? ' on the real control plane' : '';
    test.serial(`${r.bug} (${r.pattern}, ${r.operator}/${r.workload}) reproduces with a generated plan${where}`, async (t) => {
      t.true(docs.includes(r.bug), `docs/sieve-bugs.md lists ${r.bug}`);
      const { config, out, cluster, plans } = await campaign(r.operator, r.workload, choice);
      const matching = plans.filter((p) => p.spec.pattern === r.pattern && contains(p.spec.faults, r.faults));
      t.true(matching.length > 0, `kperturb plan generated a ${r.pattern} plan with faults ${JSON.stringify(r.faults)} (among ${plans.length} plans)`);
      const results: PlanResult[] = [];
      const reproduced = (res: PlanResult) => res.verdict === 'bug' && r.symptom.every((s) => res.alarms.some((a) => a.message.includes(s)));
      for (let attempt = 0; attempt < (r.attempts ?? 1) && !results.some(reproduced); attempt++) {
        for (const p of matching) {
          const [res] = await runPlans(config, [p], { out, log: quiet, cluster });
          results.push(res!);
          if (reproduced(res!)) break;
        }
      }
      const hit = results.find(reproduced);
      t.log(`${matching.length} matching plan(s), ${results.length} run(s); ${hit ? `reproduced by ${hit.plan}: ${hit.description}` : 'not reproduced'}`);
      t.truthy(
        hit,
        `no run showed the symptom: ${JSON.stringify(
          results.map((x) => ({ plan: x.plan, verdict: x.verdict, error: x.error, alarms: x.alarms.map((a) => a.message) })),
          null,
          1,
        )}`,
      );
    });
  }
