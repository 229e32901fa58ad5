/**
 * `kperturb plan --select` through the CLI: on the same reference runs it writes a subset of the
 * whole set (plan for plan the same faults and triggers), shows the `selected` stage, says how many
 * it left out and how to get them all, records the choice in pruning.json, and a later `plan`
 * without it writes the whole set again (nothing of the selection left behind). `--select` with
 * `--no-prune` is bad input. Whole CLI runs of the small mirror controller.
 */
import test from 'ava';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { kperturb, ok, writeMirrorConfig } from '../campaign/_mirror-campaign.js';
import { sharedScratchDir } from '../_scratch-dir.js';

// Kept when a test (or a before hook) fails, and with KEEP set.
const dir = process.env.KEEP ? mkdtempSync(join(tmpdir(), 'kperturb-plan-select-')) : sharedScratchDir('kperturb-plan-select-');
const out = join(dir, 'out');
const plansDir = join(out, 'mirror', 'plans', 'w');
let config = '';

test.before(async () => {
  // Four mirrored ConfigMaps, two changed: several crash points after the same write, and stale
  // views of the same step, which selection groups.
  config = writeMirrorConfig(
    dir,
    ['a', 'b', 'c', 'd'],
    ['a', 'b'].map((x) => `patch: { key: ConfigMap/default/src-${x}, patch: { data: { v: "2" } } }`),
  );
  await ok('learn', kperturb('learn', '-c', config, '-o', out));
});

/** The plans in the workload's directory, each as what it does (name left out): its spec. */
function plansWritten(): Map<string, string> {
  const files = readdirSync(plansDir).filter((f) => f.endsWith('.yaml'));
  return new Map(files.map((f) => [f, JSON.stringify((parse(readFileSync(join(plansDir, f), 'utf8')) as { spec: unknown }).spec)]));
}

const pruning = () => JSON.parse(readFileSync(join(plansDir, 'pruning.json'), 'utf8')) as { selected: boolean };

test.serial('--select writes a subset of the whole set, says what it left out, and plan without it writes them all again', async (t) => {
  const whole = await ok('plan', kperturb('plan', '-c', config, '-o', out));
  const all = plansWritten();
  t.false(pruning().selected);
  t.notRegex(whole.stdout, /\bselected\b/);

  const sel = await ok('plan --select', kperturb('plan', '--select', '-c', config, '-o', out));
  const kept = plansWritten();
  t.true(pruning().selected);
  t.true(kept.size > 0, 'selection keeps at least one plan');
  t.true(kept.size < all.size, `selection left out none of ${all.size} plans`);
  // Each kept plan is the whole set's plan of the same name.
  for (const [file, spec] of kept) t.is(all.get(file), spec, `${file} differs from the whole set's plan of that name`);
  t.regex(sel.stdout, new RegExp(`^w: ${kept.size} plan\\(s\\) in `, 'm'));
  t.regex(sel.stdout, /\bselected\b/, 'the stage table has the selection row');
  t.true(
    sel.stderr.includes(
      `(${all.size - kept.size} more left out, one kept per group of plans that exercise the same step: \`kperturb plan\` without --select writes every plan)`,
    ),
    sel.stderr,
  );

  await ok('plan again', kperturb('plan', '-c', config, '-o', out));
  t.deepEqual([...plansWritten().values()].sort(), [...all.values()].sort());
  t.false(pruning().selected);
});

test.serial('--select with --no-prune is bad input, exit 2, naming the option, and writes nothing', async (t) => {
  const before = plansWritten();
  const r = await kperturb('plan', '--select', '--no-prune', '-c', config, '-o', out);
  t.is(r.status, 2);
  t.regex(r.stderr, /at --select: not with --no-prune/);
  t.notRegex(r.stderr, /\n\s+at /, 'no stack trace');
  t.deepEqual(plansWritten(), before);
});
