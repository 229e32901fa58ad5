/**
 * The layers of ARCHITECTURE.md hold by lint (eslint.config.js, `npm run lint` in CI): an import that
 * points up or sideways is an error. Each probe is linted as if it were a file at that path (nothing
 * is written into the source tree).
 */
import test from 'ava';
import { ESLint } from 'eslint';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

async function importErrors(file: string, specifier: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import * as probe from '${specifier}';\nexport const used = probe;\n`, { filePath: join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const refused: Array<[string, string, RegExp]> = [
  ['planner/probe.ts', '../src/campaign/campaign.js', /planner\/ and oracles\/ are pure/],
  ['oracles/probe.ts', 'node:fs', /are pure/],
  ['oracles/probe.ts', '../proxy/index.js', /are pure/],
  ['src/model/probe.ts', '../../planner/index.js', /src\/model is the core/],
  ['src/model/probe.ts', '../cluster/operations.js', /src\/model is the core/],
  ['proxy/probe.ts', '../src/cluster/selectors.js', /proxy\/ knows the wire/],
  ['proxy/probe.ts', '../src/coordinator/run.js', /proxy\/ knows the wire/],
  ['src/coordinator/probe.ts', '../report/terminal.js', /does not import the app layer/],
  ['src/cluster/probe.ts', '../cli/main.js', /does not import the app layer/],
];

for (const [file, specifier, message] of refused) {
  test(`lint refuses ${specifier} in ${file}`, async (t) => {
    const errors = await importErrors(file, specifier);
    t.is(errors.length, 1, errors.join('; '));
    t.regex(errors[0] ?? '', message);
  });
}

const allowed: Array<[string, string]> = [
  ['planner/probe.ts', '../src/model/plan.js'],
  ['oracles/probe.ts', '../src/model/field-path.js'],
  ['proxy/probe.ts', '../src/model/selectors.js'],
  ['src/coordinator/probe.ts', '../cluster/index.js'],
  ['src/campaign/probe.ts', '../coordinator/run.js'],
];

for (const [file, specifier] of allowed) {
  test(`lint allows ${specifier} in ${file}`, async (t) => {
    t.deepEqual(await importErrors(file, specifier), []);
  });
}
