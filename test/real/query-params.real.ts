/**
 * The query-parameter table (test/fidelity/_query-table.ts) on the real control plane, directly and
 * through the proxy: the same expected answers as the embedded cluster's (test/fidelity/query-params.test.ts),
 * so a difference between kube-apiserver and the embedded cluster fails one of the two tiers.
 */
import test from 'ava';
import { ControllerProxy } from '../../proxy/index.js';
import { startRealControlPlane } from '../../src/realcluster/index.js';
import { MemoryTrace, proxyAuth } from '../proxy/helpers.js';
import { EXPECTED_QUERY_ANSWERS, runQueryTable } from '../fidelity/_query-table.js';

test('the query-parameter table: kube-apiserver, directly and through the proxy, answers as the table says', async (t) => {
  const cp = await startRealControlPlane();
  t.teardown(() => cp.stop());
  const proxy = await ControllerProxy.start({ upstream: cp.url, upstreamCaPem: cp.caPem, upstreamToken: cp.token, trace: new MemoryTrace(), log: () => {} });
  t.teardown(() => proxy.stop());
  const direct = await runQueryTable({ url: cp.url, headers: { authorization: `Bearer ${cp.token}` }, caPem: cp.caPem }, 'qt-direct');
  const proxied = await runQueryTable({ url: proxy.url, headers: proxyAuth(proxy) }, 'qt-proxy');
  if (process.env.QUERY_TABLE_DUMP) console.log(JSON.stringify({ direct, proxied }, null, 1));
  t.deepEqual(direct, EXPECTED_QUERY_ANSWERS, 'directly');
  t.deepEqual(proxied, EXPECTED_QUERY_ANSWERS, 'through the proxy');
});
