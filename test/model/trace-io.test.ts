import test from 'ava';
import { hashSecretValue, redactSecretObjects } from '../../src/model/trace-io.js';

test('end-state objects: Secret values become hashes (equal values, equal hashes); other kinds are untouched', (t) => {
  const objects: Record<string, unknown> = {
    'Secret/default/a': { metadata: { name: 'a' }, data: { 'tls.crt': 'Y2VydA==', 'tls.key': 'a2V5' }, stringData: { user: 'admin' } },
    'Secret/default/b': { metadata: { name: 'b' }, data: { 'tls.crt': 'Y2VydA==' } },
    'ConfigMap/default/a': { metadata: { name: 'a' }, data: { 'tls.crt': 'Y2VydA==' } },
  };
  redactSecretObjects(objects);
  const a = objects['Secret/default/a'] as { data: Record<string, string>; stringData: Record<string, string> };
  const b = objects['Secret/default/b'] as { data: Record<string, string> };
  t.is(a.data['tls.crt'], hashSecretValue('Y2VydA=='));
  t.is(a.data['tls.crt'], b.data['tls.crt']);
  t.not(a.data['tls.key'], a.data['tls.crt']);
  t.is(a.stringData.user, hashSecretValue('admin'));
  t.false(JSON.stringify(objects['Secret/default/a']).includes('a2V5'));
  t.deepEqual(objects['ConfigMap/default/a'], { metadata: { name: 'a' }, data: { 'tls.crt': 'Y2VydA==' } });
});
