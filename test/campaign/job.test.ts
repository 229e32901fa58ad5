/**
 * `kperturb job`: the Indexed Job manifest, its bad inputs, and the script each of its pods runs,
 * run here with sh as the pod would run it (its environment as the Job controller and the manifest
 * set it, kperturb on PATH, the campaign copied where the image holds it). The manifest on a real
 * cluster's Job controller: test/real/job.real.ts.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { indexedJob, SHARD_SCRIPT } from '../../src/campaign/job.js';
import { UserInputError } from '../../src/model/errors.js';
import type { ResultsFile } from '../../src/model/results.js';
import { CLI, run, writeMirrorConfig, writeNeverFiringPlans } from './_mirror-campaign.js';
import { sharedScratchDir } from '../_scratch-dir.js';

// Kept when a test fails, and with KEEP set.
const dir = process.env.KEEP ? mkdtempSync(join(tmpdir(), 'kperturb-job-')) : sharedScratchDir('kperturb-job-');

interface Container {
  command: string[];
  env: Array<{ name: string; value: string }>;
  volumeMounts: Array<{ name: string; mountPath: string }>;
}
interface JobDoc {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: {
    completionMode: string;
    completions: number;
    parallelism: number;
    template: { spec: { restartPolicy: string; containers: Container[]; volumes: Array<Record<string, unknown>> } };
  };
}

test('the manifest: an Indexed Job of N pods, each running its shard against the campaign in the image', (t) => {
  const r = spawnSync(
    process.execPath,
    [
      CLI,
      'job',
      '--shards',
      '5',
      '--image',
      'registry.example/op-campaign:1',
      '--namespace',
      'ci',
      '--results-claim',
      'kperturb-results',
      '-j',
      '3',
      '-c',
      writeConfig(),
    ],
    { encoding: 'utf8' },
  );
  t.is(r.status, 0, r.stderr);
  const job = parse(r.stdout) as JobDoc;
  t.is(job.kind, 'Job');
  t.is(job.metadata.name, 'kperturb-mirror');
  t.is(job.metadata.namespace, 'ci');
  t.like(job.spec, { completionMode: 'Indexed', completions: 5, parallelism: 5 });
  const pod = job.spec.template.spec;
  t.is(pod.restartPolicy, 'Never');
  const c = pod.containers[0]!;
  t.deepEqual(c.command, ['/bin/sh', '-c', SHARD_SCRIPT]);
  t.regex(SHARD_SCRIPT, /kperturb test --shard "\$JOB_COMPLETION_INDEX\/\$KPERTURB_SHARDS"/);
  t.deepEqual(Object.fromEntries(c.env.map((e) => [e.name, e.value])), {
    KPERTURB_SHARDS: '5',
    KPERTURB_CAMPAIGN: '/campaign',
    KPERTURB_RESULTS: '/results',
    KPERTURB_PARALLEL: '3',
  });
  t.deepEqual(pod.volumes, [{ name: 'results', persistentVolumeClaim: { claimName: 'kperturb-results' } }]);
  t.deepEqual(c.volumeMounts, [{ name: 'results', mountPath: '/results' }]);
});

test('bad job options exit 2 naming the option', (t) => {
  const config = writeConfig();
  for (const [args, option] of [
    [['--shards', '0', '--image', 'x'], '--shards'],
    [['--shards', 'three', '--image', 'x'], '--shards'],
    [['--shards', '2'], '--image'],
    [['--shards', '2', '--image', 'a b'], '--image'],
    [['--shards', '2', '--image', 'x', '--name', 'Not_A_Name'], '--name'],
    [['--shards', '2', '--image', 'x', '--output', join(dir, 'no', 'such', 'dir', 'job.yaml')], '--output'],
  ] as const) {
    const r = spawnSync(process.execPath, [CLI, 'job', ...args, '-c', config], { encoding: 'utf8' });
    t.is(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    t.true(r.stderr.includes(option), r.stderr);
    t.false(/\n\s+at /.test(r.stderr), 'no stack trace');
  }
  t.throws(() => indexedJob({ controller: 'c', shards: 1001, image: 'x' }), { instanceOf: UserInputError, message: /--shards/ });
});

let configFile: string | undefined;
/** A one-workload campaign of the mirror controller, in <dir>/campaign. */
function writeConfig(): string {
  configFile ??= writeMirrorConfig(join(dir, 'campaign'), ['a']);
  return configFile;
}

test('the pod script runs its shard of the campaign into <results>/shard-<index>, and a setup failure fails the pod', async (t) => {
  const config = writeConfig();
  const campaign = join(dir, 'campaign');
  const learned = await run(process.execPath, [CLI, 'learn', '-c', config, '-o', join(campaign, 'out')]);
  t.is(learned.status, 0, learned.stderr);
  writeNeverFiringPlans(join(campaign, 'out', 'mirror', 'plans', 'w'), ['never-1', 'never-2', 'never-3']);
  // kperturb on PATH, as the image installs it.
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'kperturb'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
  chmodSync(join(bin, 'kperturb'), 0o755);
  const results = join(dir, 'results');
  const podEnv = (index: number, campaignDir = campaign) => ({
    ...process.env,
    PATH: `${bin}:${process.env.PATH}`,
    JOB_COMPLETION_INDEX: String(index),
    KPERTURB_SHARDS: '2',
    KPERTURB_CAMPAIGN: campaignDir,
    KPERTURB_RESULTS: results,
    KPERTURB_PARALLEL: '2',
  });

  const shards = await Promise.all([0, 1].map((i) => run('/bin/sh', ['-c', SHARD_SCRIPT], podEnv(i))));
  const tested: string[] = [];
  shards.forEach((r, i) => {
    t.is(r.status, 0, r.stderr);
    t.regex(r.stdout, new RegExp(`shard ${i}/2 exited 0; results in ${results}/shard-${i}`));
    const file = join(results, `shard-${i}`, 'mirror', 'results.json');
    t.true(existsSync(file), file);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as ResultsFile;
    t.deepEqual(doc.shard, { index: i, count: 2 });
    // Each result names its plan file and config, for the command that runs it again.
    for (const x of doc.results)
      t.like(x, { planFile: join(results, `shard-${i}`, 'mirror', 'plans', 'w', `${x.plan}.yaml`), configFile: join(campaign, 'kperturb.yaml') });
    tested.push(...doc.results.map((x) => x.plan));
  });
  t.deepEqual(tested.sort(), ['never-1', 'never-2', 'never-3']);
  // The campaign in the image is left as it was: every shard works on a copy.
  t.false(existsSync(join(campaign, 'out', 'mirror', 'results.json')));

  // A broken campaign is a setup failure: the pod fails (the Job retries it), unlike a bug found.
  const broken = join(dir, 'broken');
  cpSync(campaign, broken, { recursive: true });
  writeFileSync(join(broken, 'kperturb.yaml'), 'apiVersion: kperturb.dev/v1\nkind: ControllerUnderTest\n');
  const failed = await run('/bin/sh', ['-c', SHARD_SCRIPT], podEnv(0, broken));
  t.is(failed.status, 2, failed.stderr);
});

test('the Containerfile copies what exists, links the kperturb the pods run, and builds the campaign stage on it', (t) => {
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const text = readFileSync(join(root, 'Containerfile'), 'utf8');
  const copies = [...text.matchAll(/^COPY (?!--from)(.+) (\S+)$/gm)].flatMap((m) => m[1]!.split(/\s+/));
  t.true(copies.length >= 5, text);
  for (const source of copies) t.true(existsSync(join(root, source)), `COPY ${source}: not in the repository`);
  // tsc -b (npm ci's prepare) compiles every folder the layers' projects include: each must be copied.
  const tsconfig = (file: string) =>
    JSON.parse(readFileSync(join(root, file), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as { include?: string[]; references?: Array<{ path: string }> };
  const layers = (tsconfig('tsconfig.json').references ?? []).map((r) => r.path.replace(/^\.\//, ''));
  t.true(layers.length >= 4, 'tsconfig.json references the layers');
  for (const layer of layers) {
    t.true(copies.includes(layer), `tsconfig.json references ${layer}, which the Containerfile does not copy`);
    const includes = (tsconfig(layer).include ?? []).map((p) => p.split('/')[0]!);
    for (const folder of new Set(includes)) t.true(copies.includes(folder), `${layer} includes ${folder}/, which the Containerfile does not copy`);
  }
  const link = /ln -s (\S+) \/usr\/local\/bin\/kperturb/.exec(text);
  t.truthy(link, 'kperturb linked onto PATH');
  t.is(link![1], '/opt/kperturb/bin/kperturb.js');
  t.true(existsSync(join(root, 'bin', 'kperturb.js')));
  t.regex(text, /^FROM kperturb AS campaign$/m);
  t.regex(text, /^COPY --from=campaign \. \/campaign$/m);
  // The Job's default campaign directory is where the image puts it.
  t.regex(JSON.stringify(indexedJob({ controller: 'c', shards: 1, image: 'x' })), /"KPERTURB_CAMPAIGN","value":"\/campaign"/);
});
