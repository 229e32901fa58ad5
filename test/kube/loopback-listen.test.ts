/** listenOnLoopback (src/kube/loopback-listen.ts): the one way kperturb's servers bind. */
import { createServer, type AddressInfo } from 'node:net';
import test from 'ava';
import { listenOnLoopback } from '../../src/kube/loopback-listen.js';

test('binds 127.0.0.1 on a free port and says which; a port in use rejects with the listen error and leaves no listener behind', async (t) => {
  const first = createServer();
  const port = await listenOnLoopback(first);
  t.teardown(() => first.close());
  t.deepEqual(first.address(), { address: '127.0.0.1', family: 'IPv4', port } satisfies AddressInfo);

  const second = createServer();
  const err = await t.throwsAsync(listenOnLoopback(second, port));
  t.is((err as NodeJS.ErrnoException).code, 'EADDRINUSE');
  t.is(second.listenerCount('error'), 0);
});
