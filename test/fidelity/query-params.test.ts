/**
 * The query-parameter table (test/fidelity/_query-table.ts) on the embedded cluster, directly and
 * through the proxy: every value of apimachinery's conversions against every parameter, answered as
 * kube-apiserver answers it (the real control plane runs the same table: test/real/query-params.real.ts).
 */
import test from 'ava';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { ControllerProxy } from '../../proxy/index.js';
import { MemoryTrace, proxyAuth } from '../proxy/helpers.js';
import { EXPECTED_QUERY_ANSWERS, QUERY_CASES, runQueryTable } from './_query-table.js';

test('the query-parameter table: the embedded cluster, directly and through the proxy, answers as kube-apiserver', async (t) => {
  const cluster = await EmbeddedCluster.start({ port: 0 });
  t.teardown(() => cluster.stop());
  const trace = new MemoryTrace();
  const proxy = await ControllerProxy.start({
    upstream: cluster.url,
    ...(cluster.token ? { upstreamToken: cluster.token } : {}),
    trace,
    log: () => {},
  });
  t.teardown(() => proxy.stop());
  const direct = await runQueryTable({ url: cluster.url, headers: cluster.token ? { authorization: `Bearer ${cluster.token}` } : {} }, 'qt-direct');
  const proxied = await runQueryTable({ url: proxy.url, headers: proxyAuth(proxy) }, 'qt-proxy');
  if (process.env.QUERY_TABLE_DUMP) console.log(JSON.stringify({ direct, proxied }, null, 1));
  t.deepEqual(direct, EXPECTED_QUERY_ANSWERS, 'directly');
  t.deepEqual(proxied, EXPECTED_QUERY_ANSWERS, 'through the proxy');
  // The proxy's own classification (what it traces, arms faults on and counts as a watch) agrees with
  // what upstream served: the cases ran one after the other, last, so the trace's last requests are theirs.
  const requests = trace.ofType('request').slice(-QUERY_CASES.length);
  const misread = QUERY_CASES.flatMap((c, i) => {
    const served = proxied[c.title];
    return (served === 'watch' || served === 'list') && requests[i]?.verb !== served
      ? [`${c.title}: served as a ${served}, traced as a ${requests[i]?.verb}`]
      : [];
  });
  t.deepEqual(misread, []);
});
