/**
 * kperturb installs as a normal npm CLI: the tarball `npm pack` makes holds what the commands need
 * (compiled code, the bundled examples' configs, manifests and sources, the real control plane's
 * setup, docs, LICENSE) and nothing of the tests or build output; installed with `npm install -g`
 * from it, `kperturb` runs the demo's TypeScript example and finds its planted bug.
 * The dependencies come from npm's cache (`npm ci` filled it) or the registry.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '../_scratch-dir.js';
import { fileURLToPath } from 'node:url';
import { hangBound } from '../_hang-bound.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

test('npm pack + npm install -g: the installed kperturb runs the demo from its own files', (t) => {
  t.timeout(hangBound(600_000));
  const dir = scratchDir(t, 'kperturb-package-');
  // Built already (npm test builds first), so no scripts: pack what is there.
  const pack = spawnSync(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' });
  t.is(pack.status, 0, pack.stderr);
  const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const files = info!.files.map((f) => f.path);
  for (const needed of [
    'bin/kperturb.js',
    'dist/src/cli/main.js',
    'dist/fixtures/controllers/secret-marker/buggy.js',
    'fixtures/controllers/secret-marker/buggy/kperturb.yaml',
    'fixtures/controllers/go/main.go',
    'realcp/setup.sh',
    'schemas/kperturb.schema.json',
    'schemas/testplan.schema.json',
    'vendor/kubernetes-openapi/v3.json.gz',
    'vendor/kubernetes-openapi/v2.json.gz',
    'LICENSE',
    'README.md',
    'docs/cli.md',
  ]) {
    t.true(files.includes(needed), `the package holds ${needed}`);
  }
  t.deepEqual(
    files.filter((f) => f.startsWith('dist/test/') || f.startsWith('test/') || f.startsWith('fixtures/controllers/go/bin/') || f.startsWith('src/')),
    [],
    'no tests, sources or build output',
  );
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; private?: boolean; dependencies: Record<string, string> };
  t.is(pkg.private, undefined, 'publishable');
  t.false('ws' in pkg.dependencies, 'ws is only used by tests');

  const prefix = join(dir, 'prefix');
  const install = spawnSync(
    NPM,
    ['install', '-g', '--prefix', prefix, join(dir, info!.filename), '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'],
    { encoding: 'utf8' },
  );
  t.is(install.status, 0, install.stderr);
  const kperturb = join(prefix, 'bin', 'kperturb');
  const work = scratchDir(t, 'kperturb-package-work-');
  const version = spawnSync(kperturb, ['--version'], { cwd: work, encoding: 'utf8' });
  t.is(version.stdout.trim(), pkg.version);
  const demo = spawnSync(kperturb, ['demo', '--only', 'secret-marker-buggy', '--no-confirm', '--confirm-runs', '0', '--no-recovery', '-j', '1'], {
    cwd: work,
    encoding: 'utf8',
  });
  t.is(demo.status, 0, demo.stderr);
  t.regex(
    demo.stdout,
    /secret-marker-buggy\/\S+: \d+ bug verdicts? -> \d+ findings?\n1\. bug: [^\n]*\n[\s\S]*?shortest reproducer: \S+\/(intermediate|error)-\d+ /,
    demo.stdout,
  );
  t.true(readdirSync(join(work, '.kperturb', 'demo')).length > 0, 'the runs are kept in the working directory');
});
