/**
 * Whole-CLI campaigns of the small mirror controller (test/proxy/fixtures/mirror-controller.ts) for
 * the campaign tests: its kperturb.yaml, plans that never fire (their runs are short), and the CLI
 * run as a child process.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));
const controllerScript = fileURLToPath(new URL('../proxy/fixtures/mirror-controller.js', import.meta.url));

export interface Exit {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, keeping its output. */
export function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Exit> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

export const kperturb = (...args: string[]): Promise<Exit> => run(process.execPath, [CLI, ...args]);

/** `exit`, or an error with its stderr when it ended with another code than `codes`. */
export async function ok(what: string, exit: Promise<Exit>, codes = [0]): Promise<Exit> {
  const r = await exit;
  if (!codes.includes(r.status ?? -1)) throw new Error(`${what} exited ${r.status}:\n${r.stderr}`);
  return r;
}

/**
 * Writes `<dir>/kperturb.yaml` for controller `mirror`, one reference run, workload `w`: apply
 * ConfigMaps src-<x> for each of `sources`, wait for the last mirror, then `then` (more steps, as
 * YAML lines). Returns the file.
 */
export function writeMirrorConfig(dir: string, sources: readonly string[], then: readonly string[] = []): string {
  mkdirSync(dir, { recursive: true });
  for (const x of sources)
    writeFileSync(join(dir, `src-${x}.yaml`), `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src-${x}, namespace: default}\ndata: {v: "1"}\n`);
  const last = sources[sources.length - 1]!;
  const file = join(dir, 'kperturb.yaml');
  writeFileSync(
    file,
    `apiVersion: kperturb.dev/v1
kind: ControllerUnderTest
metadata: { name: mirror }
controller: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(controllerScript)}] }
workloads:
  w:
    steps:
${sources.map((x) => `      - apply: src-${x}.yaml`).join('\n')}
      - waitFor: { key: ConfigMap/default/mirror-src-${last}, field: data.v, equals: "1", timeoutSeconds: 30 }
${then.map((step) => `      - ${step}`).join('\n')}
referenceRuns: 1
settle: { quietMs: 300, timeoutSeconds: 20 }
`,
  );
  return file;
}

/** Writes plans `names` into `dir`: each waits for a create that never comes, so it ends not injected. */
export function writeNeverFiringPlans(dir: string, names: readonly string[]): string[] {
  mkdirSync(dir, { recursive: true });
  return names.map((name) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      `apiVersion: kperturb.dev/v1\nkind: TestPlan\nmetadata: { name: ${name} }\nspec:\n  controller: mirror\n  workload: w\n  pattern: intermediate-state\n  description: ${name}\n  faults:\n    - type: crash-after-write\n      after: { verb: create, key: ConfigMap/default/${name}, occurrence: 1 }\n`,
    );
    return file;
  });
}
