/**
 * A killed controller leaves nothing open upstream: a real child process runs client-node informers
 * through the TLS proxy, is SIGKILLed once all three of its watches are open, a hundred times; then
 * the proxy holds no upstream request, no busy upstream socket, and (seen from outside, through a TCP
 * relay) no upstream connection that carried a watch.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { startCluster, startProxy, startTcpRelay, waitFor } from './helpers.js';

const KILLS = 100;
/** Controllers alive at once; the kills are spread over this many lanes. */
const LANES = 4;
const WATCHES_PER_CONTROLLER = 3;
const script = fileURLToPath(new URL('./fixtures/informer-controller.js', import.meta.url));
/** Halves each process's start-up: client-node's cache.js gets a stand-in for its model serializer. */
const lightSerializer = fileURLToPath(new URL('./fixtures/register-light-serializer.js', import.meta.url));

test('100 killed controllers leave no upstream request or connection of theirs open', async (t) => {
  // Bounded by progress, not by the clock: each controller killed gives the next a minute (a loaded
  // 2-core machine starts a hundred client-node processes slowly).
  const progress = () => t.timeout(60_000, 'no controller was started and killed for 60 s');
  progress();
  const cluster = await startCluster(t);
  const relay = await startTcpRelay(t, cluster.port);
  const { proxy, trace } = await startProxy(t, relay.url, { tls: true, upstreamToken: cluster.token! });
  const children = new Set<ChildProcess>();
  t.teardown(() => {
    for (const c of children) c.kill('SIGKILL');
  });

  const openStreams = new Map<string, number>();
  const watchRequests = new Map<number, string>();
  const countStreams = () => {
    // Attribute stream-open events to controllers through their label selector.
    for (const e of trace.events.splice(0)) {
      if (e.type === 'request' && e.verb === 'watch') watchRequests.set(e.id, e.query.labelSelector ?? '');
      if (e.type === 'stream-open') {
        const sel = watchRequests.get(e.id);
        if (sel) openStreams.set(sel, (openStreams.get(sel) ?? 0) + 1);
      }
    }
  };
  let maxOpenUpstream = 0;
  const runOne = async (id: number) => {
    const child = spawn(process.execPath, ['--import', lightSerializer, script], {
      env: { ...process.env, PROXY_URL: proxy.url, PROXY_CA: proxy.caPem!, PROXY_TOKEN: proxy.controllerToken, RUN_ID: String(id) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.add(child);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    await waitFor(
      `controller ${id} to open its watches`,
      () => {
        countStreams();
        return (openStreams.get(`kill=${id}`) ?? 0) >= WATCHES_PER_CONTROLLER;
      },
      30_000,
    );
    maxOpenUpstream = Math.max(maxOpenUpstream, proxy.upstreamOpenCount());
    child.kill('SIGKILL');
    await exited;
    children.delete(child);
    progress();
  };
  await Promise.all(
    Array.from({ length: LANES }, async (_, lane) => {
      for (let i = lane; i < KILLS; i += LANES) await runOne(i);
    }),
  );
  t.is(openStreams.size, KILLS);
  t.true(maxOpenUpstream >= WATCHES_PER_CONTROLLER, 'watches were open upstream while the controllers ran');

  await waitFor(
    'every upstream request of the killed controllers to be gone',
    () => proxy.upstreamOpenCount() === 0 && proxy.upstreamBusySocketCount() === 0 && relay.liveMatching(/[?&]watch=(true|1)/) === 0,
    10_000,
  );
  t.is(proxy.activity().openWatches, 0);
  t.is(proxy.activity().inFlight, 0);
  // What may remain are idle keep-alive connections of the proxy's own pool, never a watch's.
  t.true(relay.live() <= LANES * 2, `idle upstream connections: ${relay.live()}`);
});
