/**
 * Watch history under load: 100 client-node watchers, half on the embedded cluster and half through
 * the proxy, while 8 writers create, patch and delete ConfigMaps as fast as the cluster takes them.
 * Every watcher must see exactly the cluster's own record of its history (`changesAfter`): nothing
 * lost, duplicated or reordered, resourceVersions increasing; so must watchers that stop and resume
 * from the last resourceVersion they saw, and watchers that start from a compacted resourceVersion,
 * get the in-stream 410 Expired and relist. Loopback only; every wait is for an event (timeouts are
 * failure guards).
 */
import test from 'ava';
import http from 'node:http';
import { CoreV1Api, Watch, type KubeConfig } from '@kubernetes/client-node';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { kubeConfigOf, startProxy } from './helpers.js';

/** 250 cycles of create, patch, patch, delete: 1,000 writes, about 3 s with 100 watchers on 2 loaded cores. */
const CYCLES = 250;
const WRITERS = 8;
const WRITES = CYCLES * 4;
const PATH = '/api/v1/namespaces/default/configmaps';
/** Per side (direct, proxy): 35 live watchers, 8 that stop and resume, 7 that start from a compacted resourceVersion. */
const LIVE = 35;
const RESUMED = 8;
const EXPIRED = 7;
const GUARD_MS = 60_000;

interface Seen {
  type: string;
  name: string;
  rv: number;
}

const show = (e: Seen): string => `${e.type} ${e.name} rv=${e.rv}`;

/** A watcher's record: every event it received, in order, across its streams. */
class WatchRecord {
  readonly events: Seen[] = [];
  /** ERROR events (the Status), the relist's resourceVersion and items (name -> resourceVersion). */
  readonly errors: unknown[] = [];
  listed: { rv: number; items: Record<string, number> } | undefined;
  failure: string | undefined;
  private waiting: { rv: number; resolve: () => void; reject: (err: Error) => void } | undefined;

  constructor(readonly label: string) {}

  get lastRv(): number | undefined {
    return this.events.at(-1)?.rv;
  }

  push(type: string, object: { metadata?: { name?: string; resourceVersion?: string } }): void {
    if (type === 'ERROR') {
      this.errors.push(object);
      return;
    }
    this.events.push({ type, name: object.metadata?.name ?? '?', rv: Number(object.metadata?.resourceVersion) });
    if (this.waiting && (this.lastRv ?? 0) >= this.waiting.rv) this.waiting.resolve();
  }

  fail(why: string): void {
    this.failure ??= why;
    this.waiting?.reject(new Error(`${this.label}: ${why}`));
  }

  /** Resolves once an event at `rv` or later arrived. */
  reached(rv: number): Promise<void> {
    if ((this.lastRv ?? 0) >= rv) return Promise.resolve();
    if (this.failure) return Promise.reject(new Error(`${this.label}: ${this.failure}`));
    return new Promise((resolve, reject) => (this.waiting = { rv, resolve, reject }));
  }
}

/**
 * Watches from `rv` until stopped; the stream ending on its own is a failure, unless `onEnd` takes
 * over (the relist after 410). `stopAfter(n)`: after the n-th event of this stream, abort it and
 * call `onStop` (resumption); later lines of the aborted stream are ignored.
 */
async function watchFrom(
  kc: KubeConfig,
  record: WatchRecord,
  rv: number,
  opts: { stopAfter?: number; onStop?: () => void; onEnd?: () => void } = {},
): Promise<() => void> {
  let active = true;
  let received = 0;
  let controller: AbortController | undefined;
  const stop = (): void => {
    active = false;
    controller?.abort();
  };
  controller = await new Watch(kc).watch(
    PATH,
    { resourceVersion: String(rv) },
    (type: string, object: { metadata?: { name?: string; resourceVersion?: string } }) => {
      if (!active) return;
      record.push(type, object);
      if (opts.stopAfter !== undefined && ++received === opts.stopAfter) {
        stop();
        opts.onStop?.();
      }
    },
    (err: unknown) => {
      if (!active) return;
      active = false;
      if (opts.onEnd) opts.onEnd();
      else record.fail(`the stream ended (${err instanceof Error ? err.message : String(err)}) after ${record.events.length} events`);
    },
  );
  if (!active) controller.abort();
  return stop;
}

/** Keep-alive JSON writes straight to the cluster, with its token. */
function writer(cluster: EmbeddedCluster): (method: string, path: string, body: unknown, contentType?: string) => Promise<{ status: number; json: any }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: WRITERS });
  return (method, path, body, contentType = 'application/json') =>
    new Promise((resolve, reject) => {
      const data = body === undefined ? '' : JSON.stringify(body);
      const req = http.request(
        `${cluster.url}${path}`,
        { method, agent, headers: { authorization: `Bearer ${cluster.token}`, 'content-type': contentType, 'content-length': Buffer.byteLength(data) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(data);
    });
}

/** What went wrong in `got` against `want`: lost, duplicated and out-of-order resourceVersions, or the first difference. */
function differences(got: Seen[], want: Seen[]): string[] {
  const problems: string[] = [];
  const wanted = new Set(want.map((e) => e.rv));
  const counts = new Map<number, number>();
  for (const e of got) counts.set(e.rv, (counts.get(e.rv) ?? 0) + 1);
  const lost = want.filter((e) => !counts.has(e.rv));
  const duplicated = [...counts].filter(([, n]) => n > 1).map(([rv]) => rv);
  const extra = got.filter((e) => !wanted.has(e.rv));
  const backwards = got.flatMap((e, i) => (i > 0 && e.rv <= got[i - 1]!.rv ? [`${got[i - 1]!.rv} then ${e.rv}`] : []));
  if (lost.length) problems.push(`lost ${lost.length}: ${lost.slice(0, 3).map(show).join(', ')}`);
  if (duplicated.length) problems.push(`duplicated ${duplicated.length}: rv ${duplicated.slice(0, 3).join(', ')}`);
  if (extra.length) problems.push(`not in the cluster's history ${extra.length}: ${extra.slice(0, 3).map(show).join(', ')}`);
  if (backwards.length) problems.push(`resourceVersion not increasing ${backwards.length}: ${backwards.slice(0, 3).join(', ')}`);
  const i = got.findIndex((e, j) => want[j] === undefined || show(e) !== show(want[j]!));
  if (!problems.length && (i >= 0 || got.length !== want.length)) {
    problems.push(
      `differs at event ${i >= 0 ? i : got.length}: got ${got[i] ? show(got[i]!) : 'nothing'}, cluster has ${want[i >= 0 ? i : got.length] ? show(want[i >= 0 ? i : got.length]!) : 'nothing'}`,
    );
  }
  return problems;
}

test(`100 watchers (client-node direct and through the proxy; live, resumed, relisted after 410) see exactly the cluster's history of ${WRITES} writes`, async (t) => {
  t.timeout(GUARD_MS + 30_000);
  const cluster = await EmbeddedCluster.start({ simulation: false, bookmarkIntervalMs: 0 });
  t.teardown(() => cluster.stop());
  const { proxy } = await startProxy(t, cluster);
  const sides = { direct: kubeConfigOf(cluster.kubeconfigYaml()), proxy: kubeConfigOf(proxy.kubeconfigYaml()) };
  const write = writer(cluster);

  // A compacted resourceVersion for the 410 watchers, and an object that exists from the start.
  t.is((await write('POST', PATH, { metadata: { name: 'before' } })).status, 201);
  const seed = await write('POST', PATH, { metadata: { name: 'seed' }, data: { v: '0' } });
  t.is(seed.status, 201);
  const expiredRv = cluster.resourceVersion - 1;
  const startRv = cluster.resourceVersion;
  const seedState: Record<string, number> = {};
  for (const o of (await write('GET', PATH, undefined)).json.items) seedState[o.metadata.name] = Number(o.metadata.resourceVersion);

  const stops: Array<() => void> = [];
  t.teardown(() => stops.forEach((stop) => stop()));
  const records: WatchRecord[] = [];
  const expiredStarts: Array<() => Promise<void>> = [];
  for (const [side, kc] of Object.entries(sides)) {
    for (let i = 0; i < LIVE; i++) {
      const record = new WatchRecord(`${side} live #${i}`);
      records.push(record);
      stops.push(await watchFrom(kc, record, startRv));
    }
    for (let i = 0; i < RESUMED; i++) {
      // Stops after 30..940 events, resumes from the last resourceVersion it saw, stops again 150 events later and resumes.
      const record = new WatchRecord(`${side} resumed #${i}`);
      records.push(record);
      const resume = (stopAfter?: number): void => {
        const again = stopAfter === undefined ? {} : { stopAfter, onStop: () => resume() };
        void watchFrom(kc, record, record.lastRv!, again).then(
          (stop) => stops.push(stop),
          (err: Error) => record.fail(`resuming: ${err.message}`),
        );
      };
      stops.push(await watchFrom(kc, record, startRv, { stopAfter: 30 + 130 * i, onStop: () => resume(150) }));
    }
    for (let i = 0; i < EXPIRED; i++) {
      const record = new WatchRecord(`${side} expired #${i}`);
      records.push(record);
      const relist = async (): Promise<void> => {
        const list = await kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: 'default' });
        const rv = Number(list.metadata!.resourceVersion);
        record.listed = { rv, items: Object.fromEntries(list.items.map((o) => [o.metadata!.name!, Number(o.metadata!.resourceVersion)])) };
        stops.push(await watchFrom(kc, record, rv));
      };
      expiredStarts.push(async () => {
        stops.push(await watchFrom(kc, record, expiredRv, { onEnd: () => void relist().catch((err: Error) => record.fail(`relisting: ${err.message}`)) }));
      });
    }
  }
  t.is(records.length, 100);

  // Writers: cycles of create, patch, patch, delete on names of their own. A third of the way
  // through, the history is compacted through startRv and the 410 watchers start from before it.
  const responses: Seen[] = [];
  let written = 0;
  let expiredStarted: Promise<unknown> = Promise.resolve();
  const wrote = (type: string, name: string, res: { status: number; json: any }, status: number): void => {
    if (res.status !== status) throw new Error(`${type} ${name}: HTTP ${res.status} ${JSON.stringify(res.json)}`);
    if (type !== 'DELETED') responses.push({ type, name, rv: Number(res.json.metadata.resourceVersion) });
    if (++written === Math.floor(WRITES / 3)) {
      cluster.compact(startRv);
      expiredStarted = Promise.all(expiredStarts.map((start) => start()));
    }
  };
  let nextCycle = 0;
  const patch = 'application/merge-patch+json';
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      for (let c = nextCycle++; c < CYCLES; c = nextCycle++) {
        const name = `cm-${c}`;
        wrote('ADDED', name, await write('POST', PATH, { metadata: { name }, data: { v: '0' } }), 201);
        wrote('MODIFIED', name, await write('PATCH', `${PATH}/${name}`, { data: { v: '1' } }, patch), 200);
        wrote('MODIFIED', name, await write('PATCH', `${PATH}/${name}`, { data: { v: '2' } }, patch), 200);
        wrote('DELETED', name, await write('DELETE', `${PATH}/${name}`, {}), 200);
      }
    }),
  );
  await expiredStarted;
  const endRv = cluster.resourceVersion;

  // The cluster's record: every resourceVersion after startRv exactly once, agreeing with what the writers were told.
  const history = (cluster.changesAfter(startRv) ?? []).map((c) => ({ type: c.type, name: c.name, rv: c.resourceVersion }));
  t.is(history.length, WRITES);
  t.deepEqual(
    history.map((e) => e.rv),
    Array.from({ length: WRITES }, (_, i) => startRv + 1 + i),
  );
  const byRv = new Map(history.map((e) => [e.rv, e]));
  t.deepEqual(
    responses.filter((r) => show(byRv.get(r.rv) ?? { type: '?', name: '?', rv: r.rv }) !== show(r)),
    [],
    "every write's answer is in the cluster's history",
  );

  let guard: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    guard = setTimeout(() => {
      const behind = records.filter((r) => (r.lastRv ?? 0) < endRv).map((r) => `${r.label} at ${r.lastRv ?? 'nothing'}`);
      reject(new Error(`guard: after ${GUARD_MS} ms, ${behind.length} watchers had not reached rv ${endRv}: ${behind.slice(0, 5).join('; ')}`));
    }, GUARD_MS);
  });
  try {
    await Promise.race([Promise.all(records.map((r) => r.reached(endRv))), timedOut]);
  } finally {
    clearTimeout(guard);
  }

  const problems: string[] = [];
  for (const record of records) {
    let want = history;
    if (record.label.includes('expired')) {
      const status = record.errors[0] as { code?: number; reason?: string } | undefined;
      if (record.errors.length !== 1 || status?.code !== 410 || status.reason !== 'Expired') {
        problems.push(`${record.label}: expected one ERROR 410 Expired, got ${JSON.stringify(record.errors)}`);
      }
      const listRv = record.listed?.rv ?? Infinity;
      const state = { ...seedState };
      for (const e of history.filter((h) => h.rv <= listRv)) {
        if (e.type === 'DELETED') delete state[e.name];
        else state[e.name] = e.rv;
      }
      if (JSON.stringify(record.listed?.items) !== JSON.stringify(Object.fromEntries(Object.entries(state).sort()))) {
        problems.push(`${record.label}: the relist at rv ${listRv} is not the cluster's state then`);
      }
      want = history.filter((e) => e.rv > listRv);
    } else if (record.errors.length) {
      problems.push(`${record.label}: unexpected ERROR events ${JSON.stringify(record.errors)}`);
    }
    for (const p of differences(record.events, want)) problems.push(`${record.label}: ${p}`);
  }
  t.deepEqual(problems, [], `${records.length} watchers, ${WRITES} writes`);
  t.log(`${records.length} watchers, ${WRITES} writes, ${records.reduce((n, r) => n + r.events.length, 0)} events checked`);
});
