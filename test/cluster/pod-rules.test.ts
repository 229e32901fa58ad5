/**
 * Pod-spec rules of pods and workload templates (kinds/pod-rules.ts): each bad spec of the fixture
 * gets kube-apiserver's 422 (checked against a real kube-apiserver by test/real/pod-rules.real.ts),
 * and quantities print canonically.
 */
import test from 'ava';
import { formatQuantity, parseQuantity } from '../../src/cluster/kinds/pod-rules.js';
import { POD_RULE_CASES } from './pod-rules-fixture.js';
import { raw, startCluster } from './helpers.js';

for (const kase of POD_RULE_CASES) {
  test(`refused as kube-apiserver refuses it: ${kase.name}`, async (t) => {
    const c = await startCluster(t);
    const res = await raw(c.cluster, 'POST', kase.path, JSON.stringify(kase.body));
    t.is(res.status, 422, JSON.stringify(res.json));
    t.is(res.json.message, kase.message);
  });
}

test('quantities print as Quantity.String() does', (t) => {
  const canonical = (s: string): string => formatQuantity(parseQuantity(s)!);
  t.is(canonical('2000m'), '2');
  t.is(canonical('1500m'), '1500m');
  t.is(canonical('0.5'), '500m');
  t.is(canonical('1024Mi'), '1Gi');
  t.is(canonical('1536Mi'), '1536Mi');
  t.is(canonical('-1Gi'), '-1Gi');
  t.is(canonical('1e3'), '1e3');
  t.is(canonical('100'), '100');
  t.is(parseQuantity('1.2.3'), undefined);
});
