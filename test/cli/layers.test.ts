/**
 * The layers of ARCHITECTURE.md hold twice: by the compiler (one TypeScript project per layer,
 * tsconfig.*.json, references pointing down, so `npm run build` fails) and by lint (eslint.config.js,
 * `npm run lint` in CI), which also catches sideways imports inside a layer. Lint probes are linted as
 * if they were a file at that path; compile probes are a one-file project in a temporary directory
 * extending a layer's own tsconfig. Nothing is written into the source tree.
 */
import test, { type ExecutionContext } from 'ava';
import { ESLint } from 'eslint';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDir } from '../_scratch-dir.js';

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

// ---- the compiler ------------------------------------------------------------------------------

type Layer = 'core' | 'runtime' | 'app';
const BELOW: Record<Layer, Layer[]> = { core: ['core'], runtime: ['core', 'runtime'], app: ['core', 'runtime', 'app'] };
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

/**
 * Compiles `source` as a file of `layer`: a composite project extending tsconfig.<layer>.json (its
 * types, lib and strictness) that references the layer itself and those below, as a file added to
 * the layer would see them. `importing` names repository files; the probe imports them by a path
 * relative to its temporary directory. Uses the built layers' declarations (dist/), as `tsc -b` does.
 */
async function compileProbe(
  t: ExecutionContext,
  layer: Layer,
  source: (path: (file: string) => string) => string,
): Promise<{ failed: boolean; output: string }> {
  const dir = scratchDir(t, 'kperturb-layer-probe-');
  const path = (file: string) => relative(dir, join(ROOT, file));
  writeFileSync(join(dir, 'probe.ts'), source(path));
  const config = {
    extends: join(ROOT, `tsconfig.${layer}.json`),
    // typeRoots: the layer's types (node, or none) are looked up from the repository, not from /tmp.
    compilerOptions: {
      rootDir: '/',
      outDir: join(dir, 'out'),
      tsBuildInfoFile: join(dir, 'probe.tsbuildinfo'),
      typeRoots: [join(ROOT, 'node_modules/@types')],
    },
    files: ['probe.ts'],
    include: [],
    references: BELOW[layer].map((l) => ({ path: join(ROOT, `tsconfig.${l}.json`) })),
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config));
  return new Promise((resolve) => {
    execFile(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], (err, stdout, stderr) =>
      resolve({ failed: err !== null, output: stdout + stderr }),
    );
  });
}

const compileRefused: Array<[string, Layer, (path: (file: string) => string) => string, RegExp]> = [
  [
    'a node: import in the core',
    'core',
    () => `import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n`,
    /error TS2307: Cannot find module 'node:fs'/,
  ],
  ['process in the core', 'core', () => `export const pid: number = process.pid;\n`, /error TS2591: Cannot find name 'process'/],
  ['Buffer in the core', 'core', () => `export const bytes = Buffer.from('x');\n`, /error TS2591: Cannot find name 'Buffer'/],
  [
    'the core importing the runtime',
    'core',
    (p) => `export * from '${p('src/cluster/api-error.js')}';\n`,
    /error TS6307: File '[^']*src\/cluster\/api-error\.ts' is not listed within the file list of project/,
  ],
  [
    'the core importing the app',
    'core',
    (p) => `export * from '${p('src/report/color.js')}';\n`,
    /error TS6307: File '[^']*src\/report\/color\.ts' is not listed/,
  ],
  [
    'the runtime importing the app',
    'runtime',
    (p) => `export * from '${p('src/campaign/limiter.js')}';\n`,
    /error TS6307: File '[^']*src\/campaign\/limiter\.ts' is not listed/,
  ],
  [
    'a layer importing the tests',
    'app',
    (p) => `export * from '${p('test/planner/_helpers.js')}';\n`,
    /error TS6307: File '[^']*test\/planner\/_helpers\.ts' is not listed/,
  ],
];

for (const [what, layer, source, diagnostic] of compileRefused) {
  test(`the build refuses ${what}`, async (t) => {
    const { failed, output } = await compileProbe(t, layer, source);
    t.true(failed, output);
    t.regex(output, diagnostic);
  });
}

// The same probes compile when they import downwards: the failures above are the layers, not the harness.
const compileAllowed: Array<[string, Layer, (path: (file: string) => string) => string]> = [
  ['the core importing the core', 'core', (p) => `export { PATTERNS } from '${p('src/model/plan.js')}';\n`],
  [
    'the runtime importing the core, and node:',
    'runtime',
    (p) => `export { PATTERNS } from '${p('src/model/plan.js')}';\nexport { readFileSync } from 'node:fs';\nexport const pid: number = process.pid;\n`,
  ],
  ['the app importing the runtime', 'app', (p) => `export { RUN_FILES } from '${p('src/io/run-files.js')}';\n`],
];

for (const [what, layer, source] of compileAllowed) {
  test(`the build allows ${what}`, async (t) => {
    const { failed, output } = await compileProbe(t, layer, source);
    t.false(failed, output);
  });
}
