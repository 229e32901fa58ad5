/**
 * Pod-spec rules side by side: the fixture's bad pods and Deployment against the embedded cluster and a
 * real kube-apiserver, status and message compared (several errors of one object sorted: Go ranges
 * over resource maps in random order).
 */
import test from 'ava';
import { POD_RULE_CASES } from '../cluster/pod-rules-fixture.js';
import { compareWithRealControlPlane, type Request } from './_helpers.js';

async function scenarios(req: Request): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (let i = 0; i < 100 && (await req('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status !== 200; i++)
    await new Promise((r) => setTimeout(r, 100));
  for (const kase of POD_RULE_CASES) {
    const a = await req('POST', kase.path, kase.body);
    const m = /^(.*? is invalid: )\[(.*)\]$/s.exec(a.json?.message ?? '');
    const message = m
      ? `${m[1]}[${m[2]!
          .split(/, (?=spec\.)/)
          .sort()
          .join(', ')}]`
      : a.json?.message;
    out.set(kase.name, { status: a.status, reason: a.json?.reason, message });
  }
  return out;
}

test('pod specs are refused as kube-apiserver refuses them', async (t) => {
  await compareWithRealControlPlane(t, scenarios);
});
