/**
 * The scheduler binds through pods/binding, and falls back to patching spec.nodeName only on a server
 * that does not serve binding. A 404 for a pod deleted after the scheduler's informer last saw it (a
 * garbage collector's delete in flight) is not such a server: taken for one, every later pod of the
 * cluster was "bound" by a patch the API server refuses (422), and none was ever scheduled (casskop's
 * recreate, a whole campaign's two stale plans). A fake API and informers drive it, so the race is
 * exact.
 */
import test from 'ava';
import type { KubeObject } from '../../../src/model/object-key.js';
import type { Informer } from '../../../src/kube/informer.js';
import { KubeApiError } from '../../../src/kube/client.js';
import { Scheduler } from '../../../src/cluster/sim/scheduler.js';
import { WorkRunner, type SimContext } from '../../../src/cluster/sim/runtime.js';

type Handler = (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject) => void;

function fakeInformer(objects: KubeObject[]) {
  const handlers: Handler[] = [];
  const informer = {
    info: { kind: objects[0]?.kind ?? 'Pod', resource: 'pods', group: '', version: 'v1', namespaced: true },
    list: () => objects,
    get: (namespace: string | undefined, name: string) => objects.find((o) => o.metadata?.name === name && o.metadata?.namespace === namespace),
    subscribe: (h: Handler) => {
      handlers.push(h);
      for (const o of objects) h('ADDED', o);
      return () => undefined;
    },
    onChange: (h: Handler) => {
      handlers.push(h);
      return () => undefined;
    },
    waitUntil: () => Promise.resolve(true),
  };
  const add = (o: KubeObject) => {
    objects.push(o);
    for (const h of handlers) h('ADDED', o);
  };
  return { informer: informer as unknown as Informer, add };
}

const pod = (name: string, uid: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid },
  spec: { containers: [] },
});

test('a binding answered 404 because the pod went away is not a server without binding: the next pod is bound through pods/binding', async (t) => {
  const calls: string[] = [];
  let boundSecond: () => void = () => undefined;
  const secondBound = new Promise<void>((resolve) => (boundSecond = resolve));
  let readFirst: () => void = () => undefined;
  const firstRead = new Promise<void>((resolve) => (readFirst = resolve));
  const pods = fakeInformer([pod('gone', 'uid-gone')]);
  const nodes = fakeInformer([{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }]);
  const api = {
    post: (_info: unknown, _ns: string, name: string, sub: string) => {
      calls.push(`post ${name}/${sub}`);
      if (name === 'gone') return Promise.reject(new KubeApiError(404, { kind: 'Status', reason: 'NotFound', message: 'pods "gone" not found' }, 'post'));
      boundSecond();
      return Promise.resolve({});
    },
    // The live read: the pod is gone.
    get: (_info: unknown, _ns: string, name: string) => {
      calls.push(`get ${name}`);
      readFirst();
      return Promise.resolve(undefined);
    },
    patch: (_info: unknown, _ns: string, name: string) => {
      calls.push(`patch ${name}`);
      if (name === 'gone') readFirst();
      else boundSecond();
      return Promise.reject(new KubeApiError(422, { kind: 'Status', reason: 'Invalid', message: 'pod updates may not change fields' }, 'patch'));
    },
  };
  const ctx = {
    api,
    informers: { forKind: (kind: string) => Promise.resolve(kind === 'Pod' ? pods.informer : kind === 'Node' ? nodes.informer : undefined) },
    events: { eventsRecorder: () => ({ event: () => undefined }) },
    timing: { podScheduleDelayMs: 0 },
    log: () => undefined,
  } as unknown as SimContext;
  const runner = new WorkRunner(false, () => undefined);
  t.teardown(() => runner.stop());
  await Scheduler.start(ctx, runner);
  // The first pod's binding fails with 404 (it is gone); then a second pod comes.
  await firstRead;
  pods.add(pod('next', 'uid-next'));
  await secondBound;
  t.deepEqual(calls, ['post gone/binding', 'get gone', 'post next/binding']);
});
