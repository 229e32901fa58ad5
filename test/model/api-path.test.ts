import test from 'ava';
import { parseApiPath, requestVerb, formatApiPath } from '../../src/model/api-path.js';

test('namespaced, cluster-scoped and grouped paths', (t) => {
  t.deepEqual(parseApiPath('/api/v1/namespaces/ns1/configmaps/a'), { group: '', version: 'v1', namespace: 'ns1', resource: 'configmaps', name: 'a' });
  t.deepEqual(parseApiPath('/apis/apps/v1/namespaces/ns1/statefulsets/web/scale'), {
    group: 'apps',
    version: 'v1',
    namespace: 'ns1',
    resource: 'statefulsets',
    name: 'web',
    subresource: 'scale',
  });
  t.deepEqual(parseApiPath('/api/v1/configmaps'), { group: '', version: 'v1', resource: 'configmaps' });
  t.deepEqual(parseApiPath('/api/v1/namespaces/ns1'), { group: '', version: 'v1', resource: 'namespaces', name: 'ns1' });
  t.is(parseApiPath('/version'), undefined);
  t.is(parseApiPath('/api/v1/namespaces/a/configmaps/b/status/extra'), undefined);
});

test('namespaces/{name}/status and /finalize are subresources of the namespace, as the API server reads them', (t) => {
  t.deepEqual(parseApiPath('/api/v1/namespaces/ns1/status'), { group: '', version: 'v1', resource: 'namespaces', name: 'ns1', subresource: 'status' });
  t.deepEqual(parseApiPath('/api/v1/namespaces/ns1/finalize'), { group: '', version: 'v1', resource: 'namespaces', name: 'ns1', subresource: 'finalize' });
  // ...but a resource called "status" listed inside a namespace is not a thing; other resources still scope.
  t.deepEqual(parseApiPath('/api/v1/namespaces/ns1/pods'), { group: '', version: 'v1', namespace: 'ns1', resource: 'pods' });
});

test('verbs follow the request-info rules', (t) => {
  const q = (s: string) => new URLSearchParams(s);
  t.is(requestVerb('GET', parseApiPath('/api/v1/namespaces/a/configmaps'), q('watch=1')), 'watch');
  t.is(requestVerb('GET', parseApiPath('/api/v1/namespaces/a/configmaps'), q('')), 'list');
  t.is(requestVerb('GET', parseApiPath('/api/v1/namespaces/a/configmaps/x'), q('')), 'get');
  t.is(requestVerb('POST', parseApiPath('/api/v1/namespaces/a/configmaps'), q('')), 'create');
  t.is(requestVerb('DELETE', parseApiPath('/api/v1/namespaces/a/configmaps'), q('')), 'deletecollection');
  t.is(requestVerb('PATCH', parseApiPath('/api/v1/namespaces/a/status'), q('')), 'patch');
});

test('format is the inverse of parse', (t) => {
  for (const p of [
    '/api/v1/namespaces/ns1/configmaps/a',
    '/apis/apps/v1/namespaces/x/deployments/d/status',
    '/api/v1/nodes',
    '/api/v1/namespaces/ns1/status',
  ]) {
    t.is(formatApiPath(parseApiPath(p)!), p);
  }
});
