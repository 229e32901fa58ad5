/**
 * `kperturb explore` end to end on the bundled decommission operator (TypeScript, fast), its CRD cut
 * to two fields so the campaign stays at two short sequences: `--emit` writes the same workloads for
 * the same seed, as a kperturb.yaml `learn -c` loads unchanged; a run judges every step, traces
 * `spec.nodes` into the StatefulSet's replicas, and alarms on `spec.image`, which this operator never
 * carries to an existing StatefulSet (it only rescales it): the consistency oracle's class of bug.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { loadConfig } from '../../src/config/config.js';
import type { ExploreResults } from '../../src/campaign/explore.js';
import { hangBound } from '../_hang-bound.js';
import { scratchDir } from '../_scratch-dir.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(repoRoot, 'bin', 'kperturb.js');
const EXAMPLE = join(repoRoot, 'fixtures', 'controllers', 'decommission');

function kperturb(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: hangBound(300_000) }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The example's CRD without spec.storage (which adds a third sequence, and minutes, and nothing new to show). */
function twoFieldCrd(): string {
  const crd = parse(readFileSync(join(EXAMPLE, 'manifests', 'crd.yaml'), 'utf8')) as {
    spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown> } } } } }> };
  };
  delete crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.storage;
  return stringify(crd);
}

function setup(t: import('ava').ExecutionContext): { dir: string; config: string } {
  const dir = scratchDir(t, 'kperturb-explore-');
  writeFileSync(join(dir, 'crd.yaml'), twoFieldCrd());
  const config = join(dir, 'kperturb.yaml');
  writeFileSync(
    config,
    [
      'apiVersion: kperturb.dev/v1',
      'kind: ControllerUnderTest',
      'metadata: { name: decommission-explore }',
      `controller: { command: node, args: [${join(repoRoot, 'dist', 'fixtures', 'controllers', 'decommission', 'fixed.js')}] }`,
      'setup: [crd.yaml]',
      `seeds: [${join(EXAMPLE, 'manifests', 'datacenter.yaml')}]`,
      'referenceRuns: 1',
      'settle: { quietMs: 500, timeoutSeconds: 30 }',
      '',
    ].join('\n'),
  );
  return { dir, config };
}

test('explore --emit: the same seed gives byte-identical workloads, in a kperturb.yaml learn -c loads as it is', async (t) => {
  const { dir, config } = setup(t);
  const first = await kperturb('explore', '-c', config, '--emit', join(dir, 'a'), '--seed', '2', '--steps', '4');
  t.is(first.code, 0, first.stderr);
  t.regex(first.stdout, /2 sequence\(s\), 7 operation step\(s\)/);
  const second = await kperturb('explore', '-c', config, '--emit', join(dir, 'b'), '--seed', '2', '--steps', '4');
  t.is(second.code, 0, second.stderr);
  t.is(readFileSync(join(dir, 'a', 'explore.json'), 'utf8'), readFileSync(join(dir, 'b', 'explore.json'), 'utf8'));
  const emitted = loadConfig(join(dir, 'a', 'kperturb.yaml'));
  t.deepEqual([...emitted.workloads.keys()], ['explore-datacenter-dc1-1', 'explore-datacenter-dc1-2']);
  const steps = emitted.workloads.get('explore-datacenter-dc1-1')!.steps;
  t.like(steps[0], { apply: { resource: { kind: 'DataCenter', metadata: { name: 'dc1' } } } });
  t.like(steps[2], { patch: { key: 'DataCenter/default/dc1', type: 'merge', onError: 'continue' } });
  t.true('settle' in steps[3]!);
  t.true(emitted.controller.workingDir === dir, 'relative paths still resolve against the original config');
});

test('explore --sequence runs only the named sequences of the same campaign, and refuses a name it does not have', async (t) => {
  const { dir, config } = setup(t);
  const one = await kperturb('explore', '-c', config, '--emit', join(dir, 'one'), '--seed', '2', '--steps', '4', '--sequence', 'explore-datacenter-dc1-2');
  t.is(one.code, 0, one.stderr);
  const all = JSON.parse(readFileSync(join(dir, 'one', 'explore.json'), 'utf8')) as { sequences: Array<{ name: string; steps: unknown[] }> };
  t.deepEqual(
    all.sequences.map((s) => s.name),
    ['explore-datacenter-dc1-2'],
  );
  const bad = await kperturb('explore', '-c', config, '--emit', join(dir, 'bad'), '--seed', '2', '--steps', '4', '--sequence', 'nope');
  t.is(bad.code, 2);
  t.is(
    bad.stderr.trim(),
    'kperturb: at --sequence: a sequence of this campaign (seed 2, 4 steps: explore-datacenter-dc1-1 ... explore-datacenter-dc1-2), not nope [KP_E_INPUT]',
  );
});

test('explore runs every sequence, traces spec.nodes into the StatefulSet, alarms on the image it never propagates, and prints coverage', async (t) => {
  const { dir, config } = setup(t);
  const out = join(dir, 'out');
  const r = await kperturb('explore', '-c', config, '-o', out, '--seed', '2', '--steps', '4');
  t.is(r.code, 1, r.stdout + r.stderr);
  t.regex(r.stdout, /coverage: 2\/2 properties changed by an accepted step/);
  t.regex(r.stdout, /integer-up\s+spec\.nodes\s+ok\s+value: StatefulSet\/default\/dc1 spec\.replicas/);
  t.regex(
    r.stderr,
    /ALARM \[consistency\] explore-datacenter-dc1-1 step 2: spec\.image changed from "cassandra:4\.1" to "kpm-\d+", but StatefulSet\/default\/dc1 .*image still holds "cassandra:4\.1"/,
  );
  const results = JSON.parse(readFileSync(join(out, 'decommission-explore', 'explore', 'results.json'), 'utf8')) as ExploreResults;
  t.is(results.sequences.length, 2);
  t.true(results.sequences.every((s) => s.steps.every((st) => st.verdict !== 'not-run')));
  t.true(results.alarms.every((a) => a.oracle === 'consistency' && a.field === 'spec.template.spec.containers[0].image'));
  // The runs are learn's: plan takes them, with the emitted config of the same seed, as any workload's.
  t.is((await kperturb('explore', '-c', config, '--emit', join(dir, 'emit'), '--seed', '2', '--steps', '4')).code, 0);
  const planned = await kperturb('plan', '-c', join(dir, 'emit', 'kperturb.yaml'), '-o', out);
  t.is(planned.code, 0, planned.stderr);
  t.regex(planned.stdout, /explore-datacenter-dc1-1: \d+ plan\(s\)/);
});

test('explore --perturb: the sequence that passed its oracles is planned from its own runs and perturbed, and coverage is given as properties x patterns', async (t) => {
  const { dir, config } = setup(t);
  const out = join(dir, 'out');
  const r = await kperturb('explore', '-c', config, '-o', out, '--seed', '2', '--steps', '4', '--perturb', '1');
  const results = JSON.parse(readFileSync(join(out, 'decommission-explore', 'explore', 'results.json'), 'utf8')) as ExploreResults;
  const perturbation = results.perturbation!;
  // Sequence 1 alarms on the image (above); sequence 2 passes and is the one perturbed.
  t.deepEqual(perturbation.sequences, ['explore-datacenter-dc1-2'], r.stdout + r.stderr);
  t.true(perturbation.planned >= perturbation.results.length && perturbation.results.length > 0);
  t.true(perturbation.results.every((p) => p.workload === 'explore-datacenter-dc1-2' && p.verdict !== 'error'));
  t.regex(r.stdout, /perturbation: \d+ of \d+ plan\(s\) tested on 1 sequence\(s\) that passed their oracles/);
  const nodes = perturbation.coverage.properties.find((p) => p.property === 'spec.nodes');
  t.truthy(nodes, JSON.stringify(perturbation.coverage));
  t.is(
    Object.values(nodes!.byPattern).reduce((n, c) => n + c.tested, 0),
    perturbation.results.length,
  );
});
