/**
 * The real-operator tier (`npm run test:operators`, not part of `npm test`): every bug of Acto's
 * corpus (../shared/acto/bugs.yaml) that `kperturb explore` finds, listed in
 * fixtures/acto/reproductions.yaml, is found again from fresh: the operator prepared as a new user
 * would (`npm run setup:acto -- NAME`: its repository at the commit Acto tested, `kperturb init`),
 * then one exploration per operator and options in a fresh directory, with only init's
 * configuration (and the operator's committed fixtures/acto/NAME/kperturb.yaml, where one is needed).
 * The bug is found when an alarm of the named oracle, on a step of the named operation and
 * property, not judged the environment's, contains the listed text (one of them, where the bug shows
 * in one of several ways depending on the run's timing).
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/config.js';
import { explore, DEFAULT_EXPLORE_STEPS, type ExploreResults } from '../../src/campaign/explore.js';
import { alarmStep } from '../../oracles/explore/findings.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const quiet = () => undefined;

interface Reproduction {
  bug: string;
  /** fixtures/acto/NAME */
  operator: string;
  /** explore's options, as on the command line. */
  options?: { seed?: number; steps?: number; differential?: boolean; sequences?: string[] };
  /** The generated operation and the schema property it changes (explore.json's `operation`, `property`). */
  operation: string;
  property: string;
  oracle: string;
  /** A substring of the alarm's message, or a list of them (any one). */
  alarm: string | string[];
}

const reproductions = parse(readFileSync(join(repoRoot, 'fixtures', 'acto', 'reproductions.yaml'), 'utf8')) as Reproduction[];
const docs = readFileSync(join(repoRoot, 'docs', 'acto-bugs.md'), 'utf8');

const prepared = new Map<string, void>();
function setup(operator: string): void {
  if (prepared.has(operator)) return;
  const r = spawnSync('sh', [join(repoRoot, 'scripts', 'setup-acto.sh'), operator], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`setup:acto ${operator} failed (${r.status}): ${r.stderr}`);
  prepared.set(operator, undefined);
}

/** The operator's configuration: its committed one where init's needs an operator-specific answer, else init's as written. */
function configFile(operator: string): string {
  const own = join(repoRoot, 'fixtures', 'acto', operator, 'kperturb.yaml');
  return existsSync(own) ? own : join(repoRoot, 'fixtures', 'acto', operator, 'upstream', 'kperturb.yaml');
}

// One exploration per operator and options, shared by the bugs it finds.
const explorations = new Map<string, Promise<ExploreResults>>();
function exploration(r: Reproduction): Promise<ExploreResults> {
  const id = `${r.operator} ${JSON.stringify(r.options ?? {})}`;
  let e = explorations.get(id);
  if (!e) {
    e = (async () => {
      setup(r.operator);
      const config = loadConfig(configFile(r.operator));
      const out = mkdtempSync(join(tmpdir(), `kperturb-acto-${r.operator}-`));
      const { results } = await explore(config, {
        out,
        log: quiet,
        seed: r.options?.seed ?? 1,
        maxSteps: r.options?.steps ?? DEFAULT_EXPLORE_STEPS,
        ...(r.options?.differential ? { differential: true } : {}),
        ...(r.options?.sequences ? { sequences: r.options.sequences } : {}),
      });
      return results;
    })();
    explorations.set(id, e);
  }
  return e;
}

for (const r of reproductions) {
  test.serial(`${r.bug} (${r.operator}): explore's ${r.operation} of ${r.property} alarms by the ${r.oracle} oracle`, async (t) => {
    t.true(docs.includes(r.bug), `docs/acto-bugs.md lists ${r.bug}`);
    const results = await exploration(r);
    const bySequence = new Map(results.sequences.map((s) => [s.sequence, s]));
    const stepOf = (sequence: string, step: number | undefined) => alarmStep(bySequence, sequence, step)?.judged;
    const texts = typeof r.alarm === 'string' ? [r.alarm] : r.alarm;
    const hits = results.alarms.filter((a) => {
      const st = stepOf(a.sequence, a.step);
      return (
        a.oracle === r.oracle &&
        a.class !== 'environment' &&
        texts.some((text) => a.message.includes(text)) &&
        st?.operation === r.operation &&
        st.property === r.property
      );
    });
    t.log(hits.length > 0 ? `found: ${hits[0]!.sequence} step ${hits[0]!.step}: ${hits[0]!.message}` : 'not found');
    t.true(
      hits.length > 0,
      `no ${r.oracle} alarm (not the environment's) containing ${texts.map((text) => JSON.stringify(text)).join(' or ')} on a ${r.operation} step of ${r.property}; the alarms: ${JSON.stringify(
        results.alarms.map((a) => ({ oracle: a.oracle, class: a.class, sequence: a.sequence, step: a.step, message: a.message })),
        null,
        1,
      )}`,
    );
  });
}
