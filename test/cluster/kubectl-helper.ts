/** Runs the kubectl binary (KUBECTL or /usr/bin/kubectl) against a fresh embedded cluster. */
import type { ExecutionContext } from 'ava';
import { execFile, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EmbeddedClusterOptions } from '../../src/cluster/index.js';
import { startCluster, type TestCluster } from './helpers.js';
import { hangBound } from '../_hang-bound.js';
import { scratchDir } from '../_scratch-dir.js';

const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

export interface Kubectl {
  (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Writes a file in the test's scratch directory and returns its path. */
  file(name: string, content: string): string;
  /** Starts a long-running kubectl (get -w); `stop()` kills it and resolves with its output. */
  spawn(...args: string[]): { output(): string; until(holds: (output: string) => boolean, what: string): Promise<void>; stop(): Promise<string> };
  env: TestCluster;
  /** The same kubectl with extra environment variables (e.g. KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false). */
  withEnv(extra: Record<string, string>): (...args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;
}

export async function kubectlFor(t: ExecutionContext, options: EmbeddedClusterOptions = {}): Promise<Kubectl> {
  if (!existsSync(KUBECTL)) {
    t.fail(`kubectl not found at ${KUBECTL}: install it or set KUBECTL to its path (these tests cannot run without it)`);
    throw new Error('kubectl missing');
  }
  const env = await startCluster(t, options);
  const dir = scratchDir(t, 'kperturb-kubectl-');
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, env.cluster.kubeconfigYaml());
  const processEnv = { ...process.env, HOME: dir, KUBECONFIG: kubeconfig };
  const runWith =
    (env: NodeJS.ProcessEnv) =>
    (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
      new Promise((resolve) => {
        execFile(KUBECTL, args, { env, timeout: hangBound(100_000) }, (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
          resolve({ code, stdout, stderr });
        });
      });
  const run = runWith(processEnv) as Kubectl;
  run.withEnv = (extra) => runWith({ ...processEnv, ...extra });
  run.file = (name, content) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  run.spawn = (...args) => {
    const child = spawn(KUBECTL, args, { env: processEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const waiters = new Set<() => void>();
    const append = (d: Buffer) => {
      out += d.toString();
      for (const check of [...waiters]) check();
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
    /** Resolves when the output so far satisfies `holds` (on each chunk kubectl prints: no polling); rejects if kubectl exits first. */
    const until = (holds: (output: string) => boolean, what: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!holds(out)) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
        void exited.then(() => {
          if (waiters.delete(check)) reject(new Error(`kubectl ${args.join(' ')} exited before ${what}: ${out}`));
        });
      });
    const stop = async (): Promise<string> => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      return out;
    };
    t.teardown(stop);
    return { output: () => out, until, stop };
  };
  run.env = env;
  return run;
}

export async function ok(t: ExecutionContext, kubectl: Kubectl, ...args: string[]): Promise<string> {
  const res = await kubectl(...args);
  t.is(res.code, 0, `kubectl ${args.join(' ')} failed: ${res.stderr}`);
  return res.stdout;
}

/**
 * A CustomResourceDefinition of `example.com` with one served and stored version v1; `versionFields`
 * is the rest of that version (schema, subresources, additionalPrinterColumns), indented by 4.
 */
export function exampleCrd(kind: string, plural: string, scope: 'Namespaced' | 'Cluster', versionFields: string): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ${plural}.example.com}
spec:
  group: example.com
  scope: ${scope}
  names: {plural: ${plural}, singular: ${kind.toLowerCase()}, kind: ${kind}}
  versions:
  - name: v1
    served: true
    storage: true
${versionFields.replace(/^\n+|\s+$/g, '')}
`;
}

/** Applies CRDs (exampleCrd manifests) and waits until they are Established. */
export async function applyCrds(t: ExecutionContext, kubectl: Kubectl, ...crds: string[]): Promise<void> {
  await ok(t, kubectl, 'apply', '-f', kubectl.file('crds.yaml', crds.join('---\n')));
  const names = crds.map((crd) => `crd/${/metadata: \{name: ([^}]+)\}/.exec(crd)![1]!}`);
  await ok(t, kubectl, 'wait', '--for', 'condition=Established', ...names, '--timeout=90s');
}
