/**
 * Planner benchmark (a script, not a test): generates synthetic reference traces of a typical
 * operator (custom resources owning a StatefulSet, Service and ConfigMap; pods coming up, scaling,
 * deletions with finalizers and re-creations; leader-election renewals; no-op status patches), writes
 * them as trace files, and plans from them through the streaming path the CLI uses (readTrace +
 * mergeTracesBySeq + planTestsStreaming), each size in a fresh process so peak memory is its own.
 *
 *   npm run bench:planner                      # default sizes, serialized delivery (episodes)
 *   npm run bench:planner -- --sizes 3386,1000000 --mode bursts
 *
 * Prints per size: events in the run plans come from (the other reference run has as many), the time
 * to read and parse the traces alone (the baseline, measured in the same run), the planning time
 * (reading included), both as wall and CPU time (CPU is what to compare on a shared machine), their
 * CPU ratio, peak RSS, and the plans per pattern (left of baseline); then how time grows with size.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { planTestsStreaming } from '../../planner/index.js';
import { readTrace } from '../../src/io/trace-io.js';
import { mergeTracesBySeq } from '../../src/model/trace-merge.js';

type Mode = 'episodes' | 'bursts';

// ---- synthetic traces ----------------------------------------------------------------------------

class BufferedFile {
  private readonly fd: number;
  private chunks: string[] = [];
  private size = 0;
  constructor(file: string) {
    this.fd = openSync(file, 'w');
  }
  line(obj: unknown): void {
    const s = JSON.stringify(obj) + '\n';
    this.chunks.push(s);
    this.size += s.length;
    if (this.size > 1 << 20) this.flush();
  }
  flush(): void {
    if (this.chunks.length > 0) writeSync(this.fd, this.chunks.join(''));
    this.chunks = [];
    this.size = 0;
  }
  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Obj = Record<string, any>;

const KINDS: Record<string, { group: string; resource: string; apiVersion: string }> = {
  Database: { group: 'example.com', resource: 'databases', apiVersion: 'example.com/v1' },
  StatefulSet: { group: 'apps', resource: 'statefulsets', apiVersion: 'apps/v1' },
  Service: { group: '', resource: 'services', apiVersion: 'v1' },
  ConfigMap: { group: '', resource: 'configmaps', apiVersion: 'v1' },
  Pod: { group: '', resource: 'pods', apiVersion: 'v1' },
  Lease: { group: 'coordination.k8s.io', resource: 'leases', apiVersion: 'coordination.k8s.io/v1' },
};

/** Writes one reference run: `noise` makes a second run differ where real runs differ (pod IPs, tokens). */
class SyntheticRun {
  private seq = 1;
  private ts = 1_700_000_000_000;
  private id = 1;
  private rv = 1000;
  private episodeIndex = 0;
  events = 0;
  private readonly objects = new Map<string, Obj>();
  /** Pod keys per database instance. */
  private readonly pods = new Map<string, Set<string>>();
  private readonly rnd: () => number;
  private readonly noise: () => number;

  constructor(
    private readonly ctl: BufferedFile,
    private readonly cls: BufferedFile,
    private readonly mode: Mode,
    noiseSeed: number,
  ) {
    this.rnd = prng(42);
    this.noise = prng(noiseSeed);
    ctl.line({ seq: 0, ts: this.ts, type: 'header', format: 'kperturb.dev/trace/v1', source: 'controller' });
    cls.line({ seq: 0, ts: this.ts, type: 'header', format: 'kperturb.dev/trace/v1', source: 'cluster' });
    this.emitCtl({ type: 'controller', action: 'start', incarnation: 1, pid: 4242 });
  }

  private stamp(e: Obj): Obj {
    this.events++;
    return { seq: this.seq++, ts: (this.ts += 1), ...e };
  }
  private emitCtl(e: Obj): void {
    this.ctl.line(this.stamp(e));
  }
  private emitCls(e: Obj): void {
    this.cls.line(this.stamp(e));
  }

  private key(kind: string, name: string): string {
    return `${kind}/default/${name}`;
  }

  private newObject(kind: string, name: string, owner?: Obj, extra: Obj = {}): Obj {
    const meta: Obj = {
      name,
      namespace: 'default',
      uid: `uid-${name}-${this.rv}`,
      creationTimestamp: new Date(this.ts).toISOString().replace(/\.\d+Z$/, 'Z'),
      labels: { 'app.kubernetes.io/name': 'database', 'app.kubernetes.io/instance': name.split('-')[0], 'app.kubernetes.io/managed-by': 'db-operator' },
      annotations: { 'example.com/revision': '1' },
      managedFields: [{ manager: 'db-operator', operation: 'Update', apiVersion: KINDS[kind]!.apiVersion, time: new Date(this.ts).toISOString() }],
    };
    if (owner)
      meta.ownerReferences = [
        { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true },
      ];
    return { apiVersion: KINDS[kind]!.apiVersion, kind, metadata: meta, ...extra };
  }

  /** A cluster change, delivered to the controller (it watches every kind but Lease). */
  private change(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: Obj, deliver = true): string {
    const rv = String(++this.rv);
    obj.metadata.resourceVersion = rv;
    const key = this.key(obj.kind, obj.metadata.name);
    if (type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, obj);
    if (obj.kind === 'Pod') {
      const inst = obj.metadata.labels['app.kubernetes.io/instance'];
      let set = this.pods.get(inst);
      if (!set) this.pods.set(inst, (set = new Set()));
      if (type === 'DELETED') set.delete(key);
      else set.add(key);
    }
    this.emitCls({ type: 'cluster-change', eventType: type, key, resourceVersion: rv, object: obj });
    if (deliver && obj.kind !== 'Lease') this.pendingDeliveries.push({ type, key, rv, obj });
    return rv;
  }

  private pendingDeliveries: Array<{ type: string; key: string; rv: string; obj: Obj }> = [];

  private request(verb: string, obj: Obj, opts: { sub?: string; body?: unknown; status?: number } = {}): number {
    const id = this.id++;
    const k = KINDS[obj.kind]!;
    const name = obj.metadata.name;
    this.emitCtl({
      type: 'request',
      id,
      incarnation: 1,
      method: { create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE', get: 'GET' }[verb],
      path: `/apis/${k.group}/v1/namespaces/default/${k.resource}${verb === 'create' ? '' : `/${name}`}${opts.sub ? `/${opts.sub}` : ''}`,
      query: {},
      verb,
      resource: { group: k.group, version: 'v1', resource: k.resource, kind: obj.kind, namespaced: true, ...(opts.sub ? { subresource: opts.sub } : {}) },
      key: this.key(obj.kind, name),
      ...(opts.body !== undefined ? { body: opts.body } : {}),
    });
    return id;
  }

  private respond(id: number, status: number, obj: Obj | undefined): void {
    this.emitCtl({ type: 'response', id, status, object: obj ?? { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: status }, durationMs: 2 });
  }

  /** A controller write that changes the cluster. */
  private write(verb: 'create' | 'patch' | 'update' | 'delete', obj: Obj, mutate?: (o: Obj) => void, sub?: string): void {
    const key = this.key(obj.kind, obj.metadata.name);
    const current = this.objects.get(key);
    const next = verb === 'create' ? obj : structuredClone(current ?? obj);
    mutate?.(next);
    const body = verb === 'patch' ? patchBody(current, next) : verb === 'delete' ? undefined : next;
    const id = this.request(verb, next, { ...(sub ? { sub } : {}), ...(body !== undefined ? { body } : {}) });
    if (verb === 'delete') this.change('DELETED', next);
    else this.change(verb === 'create' ? 'ADDED' : 'MODIFIED', next);
    this.respond(id, verb === 'create' ? 201 : 200, next);
  }

  /** A write that changes nothing: the answer carries the current resourceVersion. */
  private noopPatch(obj: Obj, sub?: string): void {
    const current = this.objects.get(this.key(obj.kind, obj.metadata.name))!;
    const id = this.request('patch', current, { body: { status: current.status }, ...(sub ? { sub } : {}) });
    this.respond(id, 200, current);
  }

  private get(obj: Obj): void {
    const current = this.objects.get(this.key(obj.kind, obj.metadata.name));
    const id = this.request('get', obj);
    this.respond(id, current ? 200 : 404, current);
  }

  /**
   * Delivers what is pending, one event at a time (episodes) or all at once (bursts), and lets the
   * controller react to each with `react`.
   */
  private deliverAll(react: (d: { type: string; key: string; obj: Obj }) => void): void {
    while (this.pendingDeliveries.length > 0) {
      const d = this.pendingDeliveries.shift()!;
      this.emitCtl({ type: 'watch-event', id: 7, eventType: d.type, key: d.key, resourceVersion: d.rv, object: d.obj });
      if (this.mode === 'episodes') {
        const watchSeq = this.seq - 1;
        this.episodeIndex++;
        this.emitCtl({
          type: 'episode',
          phase: 'start',
          index: this.episodeIndex,
          id: 7,
          watchEventSeq: watchSeq,
          key: d.key,
          eventType: d.type,
          resourceVersion: d.rv,
        });
        react(d);
        this.ts += 60; // the quiet window
        this.emitCtl({ type: 'episode', phase: 'end', index: this.episodeIndex, id: 7, quiet: true, requests: 1 });
      } else {
        react(d);
      }
    }
    if (this.mode === 'bursts') this.ts += 1500; // quiet until the workload's next step
  }

  private renewLease(): void {
    const key = 'Lease/default/db-operator';
    let lease = this.objects.get(key);
    if (!lease) {
      lease = this.newObject('Lease', 'db-operator', undefined, { spec: { holderIdentity: 'db-operator-1', leaseDurationSeconds: 15 } });
      this.write('create', lease);
    } else {
      this.write('update', lease, (o) => (o.spec.renewTime = new Date(this.ts).toISOString()));
    }
  }

  /** The controller's reconcile of database `name`, reacting to whatever it was shown. */
  private reconcile(d: { type: string; key: string; obj: Obj }): void {
    const inst = d.obj.metadata.labels?.['app.kubernetes.io/instance'] ?? d.obj.metadata.name;
    const db = this.objects.get(this.key('Database', inst));
    if (this.rnd() < 0.05) this.renewLease();
    if (!db) return;
    this.get(db);
    if (db.metadata.deletionTimestamp) {
      for (const kind of ['StatefulSet', 'Service', 'ConfigMap']) {
        const o = this.objects.get(this.key(kind, `${inst}-${kind.toLowerCase()}`));
        if (o) this.write('delete', o);
      }
      if ((this.pods.get(inst)?.size ?? 0) === 0 && !this.objects.has(this.key('StatefulSet', `${inst}-statefulset`))) {
        this.write('patch', db, (o) => delete o.metadata.finalizers);
        this.change('DELETED', this.objects.get(this.key('Database', inst))!);
      }
      return;
    }
    if (!db.metadata.finalizers) this.write('patch', db, (o) => (o.metadata.finalizers = ['example.com/cleanup']));
    const replicas: number = db.spec.replicas;
    const sts = this.objects.get(this.key('StatefulSet', `${inst}-statefulset`));
    if (!this.objects.has(this.key('ConfigMap', `${inst}-configmap`))) {
      this.write(
        'create',
        this.newObject('ConfigMap', `${inst}-configmap`, db, {
          data: { 'postgresql.conf': `max_connections = ${100 + replicas}\nshared_buffers = 128MB\n`, version: db.spec.version },
        }),
      );
    }
    if (!this.objects.has(this.key('Service', `${inst}-service`))) {
      this.write(
        'create',
        this.newObject('Service', `${inst}-service`, db, {
          spec: { ports: [{ name: 'pg', port: 5432, targetPort: 5432 }], selector: { app: inst }, clusterIP: '10.0.0.1' },
        }),
      );
    }
    if (!sts) {
      this.write(
        'create',
        this.newObject('StatefulSet', `${inst}-statefulset`, db, {
          spec: { replicas, serviceName: `${inst}-service`, template: { spec: { containers: [{ name: 'postgres', image: `postgres:${db.spec.version}` }] } } },
          status: { replicas: 0, readyReplicas: 0 },
        }),
      );
    } else if (sts.spec.replicas !== replicas) {
      this.write('patch', sts, (o) => (o.spec.replicas = replicas));
    }
    const ready = [...(this.pods.get(inst) ?? [])].filter((k) => this.objects.get(k)?.status?.phase === 'Running').length;
    const phase = ready >= replicas ? 'Ready' : 'Creating';
    if (db.status?.phase !== phase || db.status?.readyReplicas !== ready) {
      this.write(
        'patch',
        db,
        (o) => (o.status = { ...(o.status ?? {}), phase, readyReplicas: ready, syncToken: Math.floor(this.noise() * 1e9).toString(36) }),
        'status',
      );
    } else {
      this.noopPatch(db, 'status');
    }
  }

  /** What the StatefulSet controller and kubelet do (not the controller under test). */
  private builtIns(inst: string): void {
    const sts = this.objects.get(this.key('StatefulSet', `${inst}-statefulset`));
    if (!sts) {
      for (const k of [...(this.pods.get(inst) ?? [])]) this.change('DELETED', this.objects.get(k)!);
      return;
    }
    const want: number = sts.spec.replicas;
    for (let i = 0; i < want; i++) {
      const key = this.key('Pod', `${inst}-${i}`);
      if (this.objects.has(key)) continue;
      this.change(
        'ADDED',
        this.newObject('Pod', `${inst}-${i}`, sts, { spec: { containers: [{ name: 'postgres', image: 'postgres' }] }, status: { phase: 'Pending' } }),
      );
      const pod = structuredClone(this.objects.get(key)!);
      pod.status = { phase: 'Running', podIP: `10.1.${Math.floor(this.noise() * 255)}.${i}`, conditions: [{ type: 'Ready', status: 'True' }] };
      this.change('MODIFIED', pod);
    }
    for (const k of [...(this.pods.get(inst) ?? [])]) {
      if (Number(k.split('-').pop()) >= want) this.change('DELETED', this.objects.get(k)!);
    }
  }

  /** The workload: create databases, scale them, delete and re-create some, until `events` is reached. */
  run(targetEvents: number): void {
    let n = 0;
    while (this.events < targetEvents) {
      const inst = `db${n++}`;
      const db = this.newObject('Database', inst, undefined, { spec: { replicas: 1 + Math.floor(this.rnd() * 2), version: '15' } });
      this.change('ADDED', db);
      for (let round = 0; round < 3 && this.events < targetEvents; round++) {
        this.deliverAll((d) => this.reconcile(d));
        this.builtIns(inst);
      }
      if (this.events >= targetEvents) break;
      // Scale up.
      this.change('MODIFIED', { ...structuredClone(this.objects.get(this.key('Database', inst))!), spec: { replicas: 3, version: '15' } });
      for (let round = 0; round < 3 && this.events < targetEvents; round++) {
        this.deliverAll((d) => this.reconcile(d));
        this.builtIns(inst);
      }
      // Every third database is deleted (and every sixth re-created).
      if (n % 3 === 0 && this.events < targetEvents) {
        const cur = structuredClone(this.objects.get(this.key('Database', inst))!);
        cur.metadata.deletionTimestamp = new Date(this.ts).toISOString().replace(/\.\d+Z$/, 'Z');
        this.change('MODIFIED', cur);
        for (let round = 0; round < 4 && this.events < targetEvents; round++) {
          this.deliverAll((d) => this.reconcile(d));
          this.builtIns(inst);
        }
        if (n % 6 === 0 && !this.objects.has(this.key('Database', inst))) {
          this.change('ADDED', this.newObject('Database', inst, undefined, { spec: { replicas: 1, version: '16' } }));
          for (let round = 0; round < 3 && this.events < targetEvents; round++) {
            this.deliverAll((d) => this.reconcile(d));
            this.builtIns(inst);
          }
        }
      }
    }
    this.deliverAll(() => undefined);
  }
}

function patchBody(prev: Obj | undefined, next: Obj): Obj {
  if (!prev) return next;
  const body: Obj = {};
  for (const k of ['spec', 'status', 'data']) if (JSON.stringify(prev[k]) !== JSON.stringify(next[k])) body[k] = next[k] ?? null;
  if (JSON.stringify(prev.metadata.finalizers) !== JSON.stringify(next.metadata.finalizers)) body.metadata = { finalizers: next.metadata.finalizers ?? null };
  return body;
}

function generate(dir: string, events: number, mode: Mode): number[] {
  const counts: number[] = [];
  for (const [i, noise] of [7, 8].entries()) {
    const ctl = new BufferedFile(join(dir, `ref-${i + 1}.controller.jsonl`));
    const cls = new BufferedFile(join(dir, `ref-${i + 1}.cluster.jsonl`));
    const run = new SyntheticRun(ctl, cls, mode, noise);
    run.run(events);
    ctl.close();
    cls.close();
    counts.push(run.events);
  }
  return counts;
}

// ---- measuring, in a child process per size ---------------------------------------------------------

function streams(dir: string) {
  return [1, 2].map((i) => mergeTracesBySeq([readTrace(join(dir, `ref-${i}.controller.jsonl`)), readTrace(join(dir, `ref-${i}.cluster.jsonl`))]));
}

async function child(dir: string, what: 'read' | 'plan'): Promise<void> {
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  let result: Record<string, unknown>;
  if (what === 'read') {
    let n = 0;
    for (const s of streams(dir)) for await (const _ of s) n++;
    result = { events: n };
  } else {
    const out = await planTestsStreaming({ controller: 'bench', workload: 'synthetic', references: streams(dir), options: { quietMs: 1000 } });
    result = {
      events: out.events.reduce((a, b) => a + b, 0),
      plans: Object.fromEntries(out.stats.map((s) => [s.pattern, s.stages.map((x) => x.plans)])),
      causality: out.causality,
    };
  }
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const cpu = process.cpuUsage(cpuStart);
  process.stdout.write(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, maxRssMB: process.resourceUsage().maxRSS / 1024, ...result }) + '\n');
}

function measure(dir: string, what: 'read' | 'plan'): Record<string, any> {
  const r = spawnSync(process.execPath, ['--max-old-space-size=4096', fileURLToPath(import.meta.url), `--${what}`, dir], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

async function main(argv: string[]): Promise<void> {
  const at = (flag: string) => argv.indexOf(flag);
  if (at('--read') >= 0) return child(argv[at('--read') + 1]!, 'read');
  if (at('--plan') >= 0) return child(argv[at('--plan') + 1]!, 'plan');
  if (at('--generate') >= 0) {
    // Keep a data set for profiling: --generate DIR EVENTS
    generate(argv[at('--generate') + 1]!, Number(argv[at('--generate') + 2]), at('--mode') >= 0 ? (argv[at('--mode') + 1] as Mode) : 'episodes');
    return;
  }
  const sizes = at('--sizes') >= 0 ? argv[at('--sizes') + 1]!.split(',').map(Number) : [3386, 10_000, 100_000, 1_000_000];
  const mode: Mode = at('--mode') >= 0 ? (argv[at('--mode') + 1] as Mode) : 'episodes';
  process.stdout.write(
    `planner benchmark: 2 synthetic reference runs per size, causality from ${mode === 'episodes' ? 'serialized-delivery episodes' : 'quiet-gap bursts'}, node ${process.version}\n\n`,
  );
  const rows: string[][] = [
    ['events/run', 'read only (wall/cpu)', 'plan incl. read (wall/cpu)', 'cpu ratio', 'peak RSS', 'intermediate', 'stale', 'unobserved'],
  ];
  const points: Array<{ events: number; ms: number }> = [];
  const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  for (const size of sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'kperturb-bench-'));
    try {
      const counts = generate(dir, size, mode);
      const read = measure(dir, 'read');
      const planned = measure(dir, 'plan');
      const plans = planned.plans as Record<string, number[]>;
      const fmt = (stages: number[] | undefined) => (stages ? `${stages[stages.length - 1]} (of ${stages[0]})` : '-');
      rows.push([
        String(counts[1]),
        `${secs(read.ms)} / ${secs(read.cpuMs)}`,
        `${secs(planned.ms)} / ${secs(planned.cpuMs)}`,
        `${(planned.cpuMs / read.cpuMs).toFixed(2)}x`,
        `${Math.round(planned.maxRssMB)} MB`,
        fmt(plans['intermediate-state']),
        fmt(plans['stale-state']),
        fmt(plans['unobserved-state']),
      ]);
      points.push({ events: counts[1]!, ms: planned.cpuMs });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const [i, r] of rows.entries()) {
    process.stdout.write(r.map((c, j) => c.padEnd(widths[j]!)).join('  ') + '\n');
    if (i === 0) process.stdout.write(widths.map((w) => '-'.repeat(w)).join('  ') + '\n');
  }
  if (points.length >= 2) {
    process.stdout.write('\ngrowth of planning CPU time (vs events, between consecutive sizes; exponent 1.0 = linear):\n');
    for (let i = 1; i < points.length; i++) {
      const a = points[i - 1]!;
      const b = points[i]!;
      const exponent = Math.log(b.ms / a.ms) / Math.log(b.events / a.events);
      process.stdout.write(
        `  ${a.events} -> ${b.events} events: x${(b.ms / a.ms).toFixed(1)} time for x${(b.events / a.events).toFixed(1)} events (time ~ events^${exponent.toFixed(2)})\n`,
      );
    }
  }
}

await main(process.argv.slice(2));
