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

/**
 * Where kube-apiserver (the real tier) still answers otherwise than the embedded cluster, with why;
 * docs/fidelity.md lists them. A row fixed in the embedded cluster fails here until it leaves this
 * list. Empty: every row answers alike.
 */
const REAL_TIER_DIFFERENCES: Record<string, string> = {};

test('the query-parameter table: kube-apiserver, directly and through the proxy, answers as the table says', async (t) => {
  // The WatchList gate on, as the embedded cluster's release (1.32) has it by default: 1.33 turned it off.
  const cp = await startRealControlPlane({ extraArgs: { apiserver: ['--feature-gates=WatchList=true'] } });
  t.teardown(() => cp.stop());
  const proxy = await ControllerProxy.start({ upstream: cp.url, upstreamCaPem: cp.caPem, upstreamToken: cp.token, trace: new MemoryTrace(), log: () => {} });
  t.teardown(() => proxy.stop());
  const direct = await runQueryTable({ url: cp.url, headers: { authorization: `Bearer ${cp.token}` }, caPem: cp.caPem }, 'qt-direct');
  const proxied = await runQueryTable({ url: proxy.url, headers: proxyAuth(proxy) }, 'qt-proxy');
  if (process.env.QUERY_TABLE_DUMP) console.log(JSON.stringify({ direct, proxied }, null, 1));
  const expected = { ...EXPECTED_QUERY_ANSWERS, ...REAL_TIER_DIFFERENCES };
  t.deepEqual(direct, expected, 'directly');
  t.deepEqual(proxied, expected, 'through the proxy');
  for (const row of Object.keys(REAL_TIER_DIFFERENCES))
    t.not(EXPECTED_QUERY_ANSWERS[row], REAL_TIER_DIFFERENCES[row], `${row} is the same on both tiers now: take it out of REAL_TIER_DIFFERENCES`);
});
