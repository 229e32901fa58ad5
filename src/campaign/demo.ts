/**
 * The demo campaign: learn, plan and test every bundled example controller on the embedded cluster.
 * It is what `npm start` runs on a fresh machine.
 */
import { existsSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config/config.js';
import type { PlanResult } from '../model/results.js';
import { learn, plan, test, type Log } from './campaign.js';

export const DEMO_RESULTS_FORMAT = 'kperturb.dev/demo-results/v1';

/** The repository's fixtures/controllers, found relative to this compiled file (dist/src/campaign). */
export function bundledExamplesDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'controllers');
}

export function findExampleConfigs(root = bundledExamplesDir()): string[] {
  const found: string[] = [];
  const visit = (dir: string, depth: number) => {
    if (existsSync(join(dir, 'kperturb.yaml'))) found.push(join(dir, 'kperturb.yaml'));
    if (depth === 0) return;
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') visit(join(dir, e.name), depth - 1);
    }
  };
  if (existsSync(root)) visit(root, 2);
  return found;
}

export interface DemoExampleResult {
  example: string;
  workload: string;
  plansGenerated: number;
  bugs: number;
  durationMs: number;
  plans: Array<Pick<PlanResult, 'plan' | 'pattern' | 'description' | 'verdict' | 'injected' | 'durationMs'> & { alarms: Array<{ oracle: string; object: string; message: string }> }>;
}

export interface DemoResults {
  format: typeof DEMO_RESULTS_FORMAT;
  durationMs: number;
  examples: DemoExampleResult[];
}

export async function runDemo(opts: { out: string; only?: string[]; log: Log }): Promise<DemoResults> {
  const started = Date.now();
  const examples: DemoExampleResult[] = [];
  for (const file of findExampleConfigs()) {
    const config = loadConfig(file);
    if (opts.only && opts.only.length > 0 && !opts.only.includes(config.name)) continue;
    for (const workload of config.workloads.keys()) {
      const t0 = Date.now();
      const learned = await learn(config, { out: opts.out, log: opts.log, workloads: [workload] });
      const failed = learned.flatMap((l) => l.runs).find((r) => !r.ok);
      if (failed) throw new Error(`${config.name}/${workload}: a reference run failed: ${failed.error} (see ${failed.dir})`);
      const [planned] = await plan(config, { out: opts.out, log: opts.log, workloads: [workload] });
      const results = await test(config, planned!.plans, { out: opts.out, log: opts.log });
      examples.push({
        example: config.name,
        workload,
        plansGenerated: planned!.plans.length,
        bugs: results.filter((r) => r.verdict === 'bug').length,
        durationMs: Date.now() - t0,
        plans: results.map((r) => ({
          plan: r.plan,
          pattern: r.pattern,
          description: r.description,
          verdict: r.verdict,
          injected: r.injected,
          durationMs: r.durationMs,
          alarms: r.alarms.map((a) => ({ oracle: a.oracle, object: a.object, message: a.message })),
        })),
      });
    }
  }
  return { format: DEMO_RESULTS_FORMAT, durationMs: Date.now() - started, examples };
}

export function writeDemoJson(file: string, results: DemoResults): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
}

export function exampleLabel(file: string): string {
  return relative(bundledExamplesDir(), dirname(file));
}
