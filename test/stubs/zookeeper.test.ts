/**
 * The ZooKeeper stub against the real client pravega zookeeper-operator uses
 * (github.com/samuel/go-zookeeper at the operator's pinned version, fixtures/clients/zk-probe), and
 * at the jute level for what that client cannot show (expired sessions, four-letter words).
 */
import test from 'ava';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ZooKeeperEnsemble, type ZkCall } from '../../src/stubs/zookeeper.js';
import { JuteReader, JuteWriter, PacketSplitter } from '../../src/stubs/jute.js';

const ZK_PROBE = fileURLToPath(new URL('../../../fixtures/clients/zk-probe/bin/zk-probe', import.meta.url));
const BUILD = fileURLToPath(new URL('../../../scripts/build-zk-probe.sh', import.meta.url));

function probeUnavailable(): string | undefined {
  const r = spawnSync('sh', [BUILD], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scripts/build-zk-probe.sh failed (exit ${r.status}):\n${r.stderr}`);
  return existsSync(ZK_PROBE) ? undefined : `${ZK_PROBE} is not built (no \`go\` on PATH?)`;
}

async function serve(ensemble: ZooKeeperEnsemble, calls: ZkCall[]): Promise<{ server: Server; address: string }> {
  const server = createServer((socket) => ensemble.serve(socket, (c) => calls.push(c)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, address: `127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface ProbeLine {
  call: string;
  err?: string;
  path?: string;
  data?: string;
  version?: number;
  exists?: boolean;
  children?: string[];
  event?: string;
}

test('the go-zookeeper client of zookeeper-operator: create, exists, set with versions, errors as a real server gives them, watches, close', async (t) => {
  const skip = probeUnavailable();
  if (skip) {
    t.log(skip);
    t.pass();
    return;
  }
  const ensemble = new ZooKeeperEnsemble();
  const calls: ZkCall[] = [];
  const { server, address } = await serve(ensemble, calls);
  t.teardown(() => {
    ensemble.close();
    server.close();
  });
  const out = await new Promise<string>((resolve, reject) =>
    execFile(ZK_PROBE, [address], { timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
  );
  const lines = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ProbeLine);
  const by = (call: string) => lines.filter((l) => l.call === call);
  t.deepEqual(by('create'), [
    { call: 'create', path: '/zookeeper-operator' },
    { call: 'create', path: '/zookeeper-operator/zookeeper-cluster' },
  ]);
  t.deepEqual(by('create-again')[0], { call: 'create-again', err: 'zk: node already exists' });
  t.deepEqual(by('create-orphan')[0], { call: 'create-orphan', err: 'zk: node does not exist' });
  t.deepEqual(by('exists')[0], { call: 'exists', exists: true, version: 0 });
  t.deepEqual(by('set')[0], { call: 'set', version: 1 });
  t.deepEqual(by('set-stale')[0], { call: 'set-stale', err: 'zk: version conflict' });
  t.deepEqual(by('get')[0], { call: 'get', data: 'CLUSTER_SIZE=1', version: 1 });
  t.deepEqual(by('exists-missing')[0], { call: 'exists-missing', exists: false });
  t.deepEqual(by('children')[0], { call: 'children', children: ['zookeeper', 'zookeeper-operator'] });
  t.deepEqual(by('get-config')[0], { call: 'get-config' });
  t.deepEqual(by('watch')[0], { call: 'watch', event: 'EventNodeDataChanged', path: '/zookeeper-operator/zookeeper-cluster' });
  t.deepEqual(by('delete-parent')[0], { call: 'delete-parent', err: 'zk: node has children' });
  t.deepEqual(by('delete-stale')[0], { call: 'delete-stale', err: 'zk: version conflict' });
  t.deepEqual(by('delete')[0], { call: 'delete' });
  t.deepEqual(by('create-sequential')[0], { call: 'create-sequential', path: '/seq-0000000001' });
  t.truthy(by('close')[0]);
  // The stub's own account of the calls, as the trace records them.
  t.deepEqual(
    calls.filter((c) => c.operation === 'create').map((c) => [c.path, c.result]),
    [
      ['/zookeeper-operator', 'ok'],
      ['/zookeeper-operator/zookeeper-cluster', 'ok'],
      ['/zookeeper-operator', 'NodeExists'],
      ['/missing/child', 'NoNode'],
      ['/seq-', 'ok'],
    ],
  );
  t.is(calls[0]?.operation, 'connect');
  t.is(calls.at(-1)?.operation, 'close');
  // Closing the session removed its ephemeral node.
  t.is(ensemble.get('/seq-0000000001'), undefined);
  t.is(ensemble.get('/zookeeper-operator')?.children.length, 0);
});

/** A raw client: sends jute packets, reads replies. */
async function rawClient(address: string): Promise<{ socket: Socket; send(w: JuteWriter): void; next(): Promise<Buffer> }> {
  const [host, port] = address.split(':') as [string, string];
  const socket = connect(Number(port), host);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  const splitter = new PacketSplitter();
  const queue: Buffer[] = [];
  const waiters: Array<(b: Buffer) => void> = [];
  socket.on('data', (chunk: Buffer) => {
    for (const p of splitter.push(chunk)) {
      const w = waiters.shift();
      if (w) w(p);
      else queue.push(p);
    }
  });
  return {
    socket,
    send: (w) => socket.write(w.packet()),
    next: () =>
      new Promise((resolve) => {
        const p = queue.shift();
        if (p) resolve(p);
        else waiters.push(resolve);
      }),
  };
}

function connectRequest(sessionId: bigint, password: Buffer, timeoutMs = 10_000): JuteWriter {
  return new JuteWriter().int(0).long(0n).int(timeoutMs).long(sessionId).buffer(password).bool(false);
}

test('jute: an unknown session gets session id 0 (expired); a live one reconnects with its password; timeouts are clamped to 2..20 ticks', async (t) => {
  const ensemble = new ZooKeeperEnsemble();
  const calls: ZkCall[] = [];
  const { server, address } = await serve(ensemble, calls);
  t.teardown(() => {
    ensemble.close();
    server.close();
  });
  const a = await rawClient(address);
  a.send(connectRequest(0n, Buffer.alloc(16), 500));
  const r = new JuteReader(await a.next());
  t.is(r.int(), 0); // protocol version
  t.is(r.int(), 4000); // 500 ms asked, 2 ticks given
  const session = r.long();
  const password = r.buffer()!;
  t.not(session, 0n);
  // Create a node, then drop the connection without closing the session.
  a.send(
    new JuteWriter()
      .int(1)
      .int(1)
      .ustring('/kept')
      .buffer(Buffer.from('x'))
      .vector([0], (w) => w.int(31).ustring('world').ustring('anyone'))
      .int(0),
  );
  const created = new JuteReader(await a.next());
  t.is(created.int(), 1);
  created.long();
  t.is(created.int(), 0);
  t.is(created.ustring(), '/kept');
  a.socket.destroy();

  const b = await rawClient(address);
  b.send(connectRequest(session, password));
  const again = new JuteReader(await b.next());
  again.int();
  t.is(again.int(), 10_000);
  t.is(again.long(), session);
  b.socket.destroy();

  const c = await rawClient(address);
  c.send(connectRequest(session + 12345n, password));
  const expired = new JuteReader(await c.next());
  expired.int();
  t.is(expired.int(), 0);
  t.is(expired.long(), 0n);
  t.deepEqual(
    calls.map((x) => `${x.operation}:${x.result}`),
    ['connect:ok', 'create:ok', 'reconnect:ok', 'connect:SessionExpired'],
  );
});

test('four-letter words: ruok answers imok', async (t) => {
  const ensemble = new ZooKeeperEnsemble();
  const { server, address } = await serve(ensemble, []);
  t.teardown(() => server.close());
  const [host, port] = address.split(':') as [string, string];
  const socket = connect(Number(port), host, () => socket.write('ruok'));
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString()));
  await new Promise((resolve) => socket.on('close', resolve));
  t.is(text, 'imok');
});

test('reset empties the tree back to /zookeeper', (t) => {
  const ensemble = new ZooKeeperEnsemble();
  ensemble.createNode('/a', Buffer.from('1'), [{ perms: 31, scheme: 'world', id: 'anyone' }], 0);
  t.truthy(ensemble.get('/a'));
  ensemble.reset();
  t.is(ensemble.get('/a'), undefined);
  t.deepEqual(ensemble.get('/')?.children, ['zookeeper']);
  t.deepEqual(ensemble.get('/zookeeper')?.children, ['config', 'quota']);
});
