/**
 * The clients of the fidelity matrix, each behind one small interface: a long-running client that
 * lists and watches ConfigMaps in one namespace (a `Session`: an informer, or `kubectl get -w`), a
 * one-shot list, and writes.
 *
 * - go-watchlist-off / go-watchlist-on: fixtures/clients/go-probe, a controller-runtime manager at its
 *   defaults (protobuf, HTTP/2 over TLS, leader election), with KUBE_FEATURE_WatchListClient=false/true;
 * - client-node: an @kubernetes/client-node informer and CoreV1Api, in this process;
 * - kubectl: the kubectl binary (`get -w --output-watch-events`, `get -o json`, `create`, `patch`, `delete`);
 * - python: fixtures/clients/py-probe/probe.py, Kubernetes' official Python client (Debian's
 *   python3-kubernetes for /usr/bin/python3): list, then `Watch().stream`, relisting on 410; patches
 *   retried after 409 Conflict.
 *
 * Every client reports what it shows as `name -> data.v` (the informer's cache; for kubectl the
 * events it printed, replayed) and an event log (`add a v=1`, `update a v=2`, `delete a`).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { hangBound } from '../_hang-bound.js';

export const CLIENTS = ['go-watchlist-off', 'go-watchlist-on', 'client-node', 'kubectl', 'python'] as const;
export type ClientId = (typeof CLIENTS)[number];

/** Objects every client may see that no cell is about: kube-controller-manager's CA bundle and the cells' "ready" marker. */
export const IGNORED_NAMES = new Set(['kube-root-ca.crt', 'ready']);

export type Cache = Record<string, string>;

export const GO_PROBE = fileURLToPath(new URL('../../../fixtures/clients/go-probe/bin/go-probe', import.meta.url));
export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';
export const PY_PROBE = fileURLToPath(new URL('../../../fixtures/clients/py-probe/probe.py', import.meta.url));
/** Debian's interpreter, which has python3-kubernetes (a pyenv python3 on PATH may not). */
export const SYSTEM_PYTHON = '/usr/bin/python3';

/** Why a client cannot run here, or undefined. */
export function unavailable(client: ClientId): string | undefined {
  if (client.startsWith('go-')) {
    if (spawnSync('go', ['version']).error) return 'no `go` command on PATH: the Go probe (fixtures/clients/go-probe) cannot be built';
    if (!existsSync(GO_PROBE)) return `${GO_PROBE} is not built: run scripts/build-go-probe.sh`;
  }
  if (client === 'kubectl' && !existsSync(KUBECTL)) return `kubectl not found at ${KUBECTL} (set KUBECTL)`;
  if (client === 'python' && spawnSync(SYSTEM_PYTHON, ['-c', 'import kubernetes']).status !== 0) {
    return `${SYSTEM_PYTHON} cannot import kubernetes (install Debian's python3-kubernetes, as .ci/run does)`;
  }
  return undefined;
}

/** A kubeconfig as YAML and as a file (Go and kubectl read files). */
export interface ClientConfig {
  yaml: string;
  file: string;
}

export class Scratch {
  readonly dir = mkdtempSync(join(tmpdir(), 'kperturb-fidelity-'));
  private n = 0;
  kubeconfig(yaml: string): ClientConfig {
    const file = join(this.dir, `kubeconfig-${++this.n}.yaml`);
    writeFileSync(file, yaml, { mode: 0o600 });
    return { yaml, file };
  }
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface WriteOp {
  op: 'create' | 'update' | 'delete';
  name: string;
  v?: string;
}

export interface WriteResult {
  ok: boolean;
  /** HTTP status of a refused write, or the error text. */
  error?: string;
}

/** A write in flight; `kill` ends the client process that makes it (crash-after-write). */
export interface WriteHandle {
  result: Promise<WriteResult>;
  settled(): boolean;
  kill(): Promise<void>;
}

export interface Session {
  /** What the client shows now (ignored names left out). */
  cache(): Promise<Cache>;
  /** Everything it shows, the "ready" marker included. */
  raw(): Promise<Cache>;
  /** Events so far (ignored names left out). */
  readonly log: string[];
  /** Lines worth printing when a cell fails. */
  diagnostics(): string;
  /** Ends the client at once (SIGKILL for processes). */
  stop(): Promise<void>;
  /** Has the client process exited on its own (kubectl after a watch error)? */
  exited(): { code: number | null; output: string } | undefined;
  /** Go: ms from start to winning the leader election. */
  leaderAfterMs?(): number | undefined;
  /** Go: the probe's wire summary. */
  wire?(): Promise<GoWire>;
  /** Go: writes go through the running manager. */
  write?(w: WriteOp): WriteHandle;
}

export interface GoWire {
  protocols: Record<string, number>;
  bodies: Record<string, number>;
  accepts: Record<string, number>;
  requests: string[];
  /** Messages of the Status answers to refused ConfigMap lists/watches. */
  refusals: string[];
}

export interface Client {
  readonly id: ClientId;
  /** Starts the long-running client; resolves once it has listed (its first view is complete). */
  start(kc: ClientConfig, ns: string, ready: (s: Session) => Promise<void>): Promise<Session>;
  /** A one-shot list of the namespace, as this client lists. */
  list(kc: ClientConfig, ns: string): Promise<Cache>;
  write(kc: ClientConfig, ns: string, session: Session | undefined, w: WriteOp): WriteHandle;
}

const filtered = (c: Cache): Cache =>
  Object.fromEntries(
    Object.entries(c)
      .filter(([k]) => !IGNORED_NAMES.has(k))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
const logLine = (type: string, name: string, v: string | undefined): string => (type === 'delete' ? `delete ${name}` : `${type} ${name} v=${v ?? ''}`);

function settleTracker(p: Promise<WriteResult>): { result: Promise<WriteResult>; settled(): boolean } {
  let done = false;
  const result = p.then(
    (r) => ((done = true), r),
    (err: unknown) => ((done = true), { ok: false, error: String((err as Error)?.message ?? err) }),
  );
  return { result, settled: () => done };
}

// --- Go ------------------------------------------------------------------------------------------

interface ProbeLine {
  ev: string;
  [k: string]: unknown;
}

class GoProbe implements Session {
  readonly log: string[] = [];
  private readonly lines: ProbeLine[] = [];
  private readonly waiters = new Set<() => void>();
  private stderr = '';
  private exit: { code: number | null } | undefined;
  private readonly startedAt = Date.now();
  private leaderAt: number | undefined;
  private readonly exitedPromise: Promise<void>;

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly label = 'go-probe',
  ) {
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      for (const raw of parts) {
        if (!raw.trim()) continue;
        let line: ProbeLine;
        try {
          line = JSON.parse(raw) as ProbeLine;
        } catch {
          this.stderr += `(stdout) ${raw}\n`;
          continue;
        }
        this.lines.push(line);
        if (line.ev === 'leader') this.leaderAt = Date.now();
        if ((line.ev === 'add' || line.ev === 'update' || line.ev === 'delete') && !IGNORED_NAMES.has(String(line.name))) {
          this.log.push(logLine(line.ev, String(line.name), line.v as string | undefined));
        }
        for (const w of [...this.waiters]) w();
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-20_000);
    });
    this.exitedPromise = new Promise((resolve) =>
      child.once('close', (code) => {
        this.exit = { code };
        for (const w of [...this.waiters]) w();
        resolve();
      }),
    );
  }

  /** Resolves with the first line (from index `from` on) matching `pred`. */
  next(pred: (l: ProbeLine) => boolean, what: string, from = 0, timeoutMs = 30_000): Promise<ProbeLine> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.lines.slice(from).find(pred);
        if (found) {
          done();
          resolve(found);
        } else if (this.exit) {
          done();
          reject(new Error(`${this.label} exited (code ${this.exit.code}) before ${what}`));
        }
      };
      const bound = hangBound(timeoutMs);
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.label}: no ${what} within ${bound / 1000} s`));
      }, bound);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  private send(line: string): number {
    const from = this.lines.length;
    if (!this.exit) this.child.stdin.write(line + '\n');
    return from;
  }

  async raw(): Promise<Cache> {
    const from = this.send('state');
    const line = await this.next((l) => l.ev === 'state', 'state', from, 10_000);
    return line.cache as Cache;
  }

  async cache(): Promise<Cache> {
    return filtered(await this.raw());
  }

  async wire(): Promise<GoWire> {
    const from = this.send('wire');
    const line = await this.next((l) => l.ev === 'wire', 'wire', from, 10_000);
    return {
      protocols: (line.protocols ?? {}) as Record<string, number>,
      bodies: (line.bodies ?? {}) as Record<string, number>,
      accepts: (line.accepts ?? {}) as Record<string, number>,
      requests: (line.requests ?? []) as string[],
      refusals: (line.refusals ?? []) as string[],
    };
  }

  write(w: WriteOp): WriteHandle {
    const from = this.send(`${w.op} ${w.name}${w.v !== undefined ? ` ${w.v}` : ''}`);
    const tracked = settleTracker(
      this.next((l) => l.ev === 'wrote' && l.op === w.op && l.name === w.name, `the answer to ${w.op} ${w.name}`, from, 60_000).then((l) =>
        l.ok ? { ok: true } : { ok: false, error: String(l.code ?? l.err) },
      ),
    );
    return { ...tracked, kill: () => this.stop() };
  }

  leaderAfterMs(): number | undefined {
    return this.leaderAt === undefined ? undefined : this.leaderAt - this.startedAt;
  }

  exited(): { code: number | null; output: string } | undefined {
    return this.exit ? { code: this.exit.code, output: this.stderr } : undefined;
  }

  diagnostics(): string {
    return `${this.label} stdout:\n${this.lines.map((l) => JSON.stringify(l)).join('\n')}\n${this.label} stderr (tail):\n${this.stderr.slice(-4000)}`;
  }

  async stop(): Promise<void> {
    if (!this.exit) this.child.kill('SIGKILL');
    await this.exitedPromise;
  }
}

class GoClient implements Client {
  constructor(
    readonly id: 'go-watchlist-off' | 'go-watchlist-on',
    private readonly onSpawn: (s: Session) => void,
  ) {}

  async start(kc: ClientConfig, ns: string, ready: (s: Session) => Promise<void>): Promise<Session> {
    const child = spawn(GO_PROBE, ['--namespace', ns], {
      env: { ...process.env, KUBECONFIG: kc.file, KUBE_FEATURE_WatchListClient: this.id === 'go-watchlist-on' ? 'true' : 'false' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const probe = new GoProbe(child);
    this.onSpawn(probe);
    await probe.next((l) => l.ev === 'synced', 'cache sync');
    await ready(probe);
    return probe;
  }

  async list(kc: ClientConfig, ns: string): Promise<Cache> {
    const s = await this.start(kc, ns, async () => {});
    try {
      return await s.cache();
    } finally {
      await s.stop();
    }
  }

  write(_kc: ClientConfig, _ns: string, session: Session | undefined, w: WriteOp): WriteHandle {
    if (!session?.write) throw new Error('Go writes go through a running probe');
    return session.write(w);
  }
}

// --- Python ---------------------------------------------------------------------------------------

/** The official Python client (probe.py): the same line protocol as the Go probe, writes one process each. */
class PythonClient implements Client {
  readonly id = 'python' as const;

  constructor(private readonly onSpawn: (s: Session) => void) {}

  private spawn(kc: ClientConfig, args: string[]): GoProbe {
    const child = spawn(SYSTEM_PYTHON, [PY_PROBE, ...args], { env: { ...process.env, KUBECONFIG: kc.file }, stdio: ['pipe', 'pipe', 'pipe'] });
    const probe = new GoProbe(child, 'py-probe');
    this.onSpawn(probe);
    return probe;
  }

  async start(kc: ClientConfig, ns: string, ready: (s: Session) => Promise<void>): Promise<Session> {
    const probe = this.spawn(kc, ['--namespace', ns]);
    await probe.next((l) => l.ev === 'synced', 'the first list');
    await ready(probe);
    return probe;
  }

  async list(kc: ClientConfig, ns: string): Promise<Cache> {
    const probe = this.spawn(kc, ['--namespace', ns, '--list']);
    const line = await probe.next((l) => l.ev === 'state', 'the list');
    await probe.stop();
    return filtered(line.cache as Cache);
  }

  write(kc: ClientConfig, ns: string, _session: Session | undefined, w: WriteOp): WriteHandle {
    const probe = this.spawn(kc, ['--namespace', ns, '--write', w.op, w.name, ...(w.v !== undefined ? [w.v] : [])]);
    const tracked = settleTracker(
      probe
        .next((l) => l.ev === 'wrote', `the answer to ${w.op} ${w.name}`, 0, 60_000)
        .then((l) => (l.ok ? { ok: true } : { ok: false, error: String(l.code) })),
    );
    return { ...tracked, kill: () => probe.stop() };
  }
}

// --- client-node ---------------------------------------------------------------------------------

/** A client-node KubeConfig; plain-http servers get skipTLSVerify, without which client-node 1.x refuses http://. */
export function clientNodeConfig(yaml: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(yaml);
  const cluster = kc.getCurrentCluster();
  if (cluster && cluster.server.startsWith('http:') && !cluster.skipTLSVerify) {
    kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, skipTLSVerify: true } : c));
  }
  return kc;
}

type Cm = k8s.V1ConfigMap;

class ClientNodeClient implements Client {
  readonly id = 'client-node' as const;

  async start(kc: ClientConfig, ns: string, ready: (s: Session) => Promise<void>): Promise<Session> {
    const config = clientNodeConfig(kc.yaml);
    const api = config.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(config, `/api/v1/namespaces/${ns}/configmaps`, () => api.listNamespacedConfigMap({ namespace: ns }));
    const log: string[] = [];
    const errors: string[] = [];
    const record = (type: string) => (o: Cm) => {
      const name = o.metadata?.name ?? '';
      if (!IGNORED_NAMES.has(name)) log.push(logLine(type, name, o.data?.v));
    };
    informer.on(k8s.ADD, record('add'));
    informer.on(k8s.UPDATE, record('update'));
    informer.on(k8s.DELETE, record('delete'));
    informer.on(k8s.ERROR, (e: unknown) => errors.push(String((e as Error)?.message ?? e)));
    await informer.start();
    let stopped = false;
    const session: Session = {
      log,
      raw: async () => Object.fromEntries(informer.list().map((o: Cm) => [o.metadata?.name ?? '', o.data?.v ?? ''])),
      cache: async () => filtered(await session.raw()),
      diagnostics: () => `client-node informer log: ${JSON.stringify(log)}; errors: ${JSON.stringify(errors)}`,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        await informer.stop();
      },
      exited: () => undefined,
    };
    await ready(session);
    return session;
  }

  async list(kc: ClientConfig, ns: string): Promise<Cache> {
    const list = await clientNodeConfig(kc.yaml).makeApiClient(k8s.CoreV1Api).listNamespacedConfigMap({ namespace: ns });
    return filtered(Object.fromEntries(list.items.map((o) => [o.metadata?.name ?? '', o.data?.v ?? ''])));
  }

  write(kc: ClientConfig, ns: string, _session: Session | undefined, w: WriteOp): WriteHandle {
    const api = clientNodeConfig(kc.yaml).makeApiClient(k8s.CoreV1Api);
    const run = async (): Promise<WriteResult> => {
      if (w.op === 'create') await api.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: w.name }, data: { v: w.v ?? '' } } });
      else if (w.op === 'update') {
        // read-modify-write, as a reconciler does: a PUT carrying the resourceVersion it read
        const cm = await api.readNamespacedConfigMap({ namespace: ns, name: w.name });
        cm.data = { ...(cm.data ?? {}), v: w.v ?? '' };
        await api.replaceNamespacedConfigMap({ namespace: ns, name: w.name, body: cm });
      } else await api.deleteNamespacedConfigMap({ namespace: ns, name: w.name });
      return { ok: true };
    };
    const tracked = settleTracker(run().catch((err: unknown) => ({ ok: false, error: String((err as { code?: number }).code ?? (err as Error).message) })));
    // In-process: "killing" it is the proxy ending the connection epoch, which fails the request.
    return { ...tracked, kill: async () => {} };
  }
}

// --- kubectl -------------------------------------------------------------------------------------

class KubectlProcess {
  out = '';
  err = '';
  exit: { code: number | null } | undefined;
  readonly closed: Promise<void>;
  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8').on('data', (d: string) => (this.out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (this.err += d));
    this.closed = new Promise((resolve) =>
      child.once('close', (code) => {
        this.exit = { code };
        resolve();
      }),
    );
  }
  async kill(): Promise<void> {
    if (!this.exit) this.child.kill('SIGKILL');
    await this.closed;
  }
}

class KubectlClient implements Client {
  readonly id = 'kubectl' as const;
  private readonly home = mkdtempSync(join(tmpdir(), 'kperturb-fidelity-kubectl-'));

  constructor(private readonly onSpawn: (p: KubectlProcess) => void) {}

  private spawn(kc: ClientConfig, args: string[]): KubectlProcess {
    const p = new KubectlProcess(
      spawn(KUBECTL, ['--kubeconfig', kc.file, ...args], { env: { ...process.env, HOME: this.home }, stdio: ['pipe', 'pipe', 'pipe'] }),
    );
    this.onSpawn(p);
    return p;
  }

  private async run(kc: ClientConfig, args: string[]): Promise<KubectlProcess> {
    const p = this.spawn(kc, args);
    const timer = setTimeout(() => void p.kill(), 60_000);
    await p.closed;
    clearTimeout(timer);
    return p;
  }

  async start(kc: ClientConfig, ns: string, ready: (s: Session) => Promise<void>): Promise<Session> {
    const p = this.spawn(kc, [
      'get',
      'configmaps',
      '-n',
      ns,
      '--watch',
      '--output-watch-events',
      '-o',
      'jsonpath={.type} {.object.metadata.name} {.object.data.v}{"\\n"}',
    ]);
    const events = () =>
      p.out
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          const [type = '', name = '', v] = l.split(' ');
          return { type, name, v };
        });
    const session: Session = {
      get log() {
        return events()
          .filter((e) => !IGNORED_NAMES.has(e.name))
          .map((e) =>
            e.type === 'ADDED'
              ? logLine('add', e.name, e.v)
              : e.type === 'MODIFIED'
                ? logLine('update', e.name, e.v)
                : e.type === 'DELETED'
                  ? logLine('delete', e.name, e.v)
                  : `${e.type} ${e.name}`.trim(),
          );
      },
      raw: async () => {
        const shown: Cache = {};
        for (const e of events()) {
          if (e.type === 'ADDED' || e.type === 'MODIFIED') shown[e.name] = e.v ?? '';
          else if (e.type === 'DELETED') delete shown[e.name];
        }
        return shown;
      },
      cache: async () => filtered(await session.raw()),
      diagnostics: () => `kubectl get -w stdout:\n${p.out}\nstderr:\n${p.err}`,
      stop: () => p.kill(),
      exited: () => (p.exit ? { code: p.exit.code, output: p.err } : undefined),
    };
    await ready(session);
    return session;
  }

  async list(kc: ClientConfig, ns: string): Promise<Cache> {
    const p = await this.run(kc, ['get', 'configmaps', '-n', ns, '-o', 'json']);
    if (p.exit?.code !== 0) throw new Error(`kubectl get failed: ${p.err}`);
    const list = JSON.parse(p.out) as { items: Cm[] };
    return filtered(Object.fromEntries(list.items.map((o) => [o.metadata?.name ?? '', o.data?.v ?? ''])));
  }

  write(kc: ClientConfig, ns: string, _session: Session | undefined, w: WriteOp): WriteHandle {
    const args =
      w.op === 'create'
        ? ['create', 'configmap', w.name, '-n', ns, `--from-literal=v=${w.v ?? ''}`]
        : w.op === 'update'
          ? ['patch', 'configmap', w.name, '-n', ns, '--type=merge', '-p', JSON.stringify({ data: { v: w.v ?? '' } })]
          : ['delete', 'configmap', w.name, '-n', ns];
    const p = this.spawn(kc, args);
    const tracked = settleTracker(p.closed.then(() => (p.exit?.code === 0 ? { ok: true } : { ok: false, error: p.err.trim() || `exit ${p.exit?.code}` })));
    return { ...tracked, kill: () => p.kill() };
  }

  remove(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

/**
 * The clients of one test file. Every process they start is killed by `stopAll` (call it in
 * test.after.always) even if a cell failed half way.
 */
export class ClientSet {
  private readonly sessions = new Set<Session>();
  private readonly processes = new Set<KubectlProcess>();
  private readonly kubectl = new KubectlClient((p) => this.processes.add(p));
  private readonly clients: Record<ClientId, Client> = {
    'go-watchlist-off': new GoClient('go-watchlist-off', (s) => this.sessions.add(s)),
    'go-watchlist-on': new GoClient('go-watchlist-on', (s) => this.sessions.add(s)),
    'client-node': new ClientNodeClient(),
    kubectl: this.kubectl,
    python: new PythonClient((s) => this.sessions.add(s)),
  };

  get(id: ClientId): Client {
    return this.clients[id];
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => s.stop()));
    await Promise.all([...this.processes].map((p) => p.kill()));
    this.kubectl.remove();
  }
}
