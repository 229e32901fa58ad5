/**
 * The controller of test/campaign/serialized-learning.test.ts: one whose writes depend on how its
 * watch events are delivered. It keeps ConfigMap default/roster listing every ConfigMap labelled
 * `member: "true"` (name -> data.role), then ConfigMap default/roster-status with their count.
 *
 * Like a controller-runtime work queue with a rate limiter, it reconciles a while (RECONCILE_DELAY_MS)
 * after the first event of a batch, from its informer cache. Members created in quick succession
 * therefore reach the roster in one write with normal delivery, but one at a time under
 * `learn --serialize` when the quiet window is longer than the delay: a roster written member by
 * member when serialized, in one write otherwise.
 */
import * as k8s from '@kubernetes/client-node';

const RECONCILE_DELAY_MS = 100;

const kc = new k8s.KubeConfig();
kc.loadFromDefault();
const core = kc.makeApiClient(k8s.CoreV1Api);
const namespace = 'default';
const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`, () => core.listNamespacedConfigMap({ namespace }));

/**
 * Creates or replaces ConfigMap `name` so that its data is `data`; nothing when its cache says it
 * already is. The replace is unconditional (no resourceVersion), and a create that finds the object
 * (its cache had not seen it yet) replaces it: the write does not wait for the cache to catch up.
 */
async function ensure(name: string, data: Record<string, string>): Promise<void> {
  const existing = informer.get(name, namespace);
  if (existing && JSON.stringify(existing.data ?? {}) === JSON.stringify(data)) return;
  const replace = () => core.replaceNamespacedConfigMap({ name, namespace, body: { metadata: { name, namespace }, data } });
  if (existing) {
    await replace();
    return;
  }
  try {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
    await replace();
  }
}

async function reconcile(): Promise<void> {
  const members = informer
    .list(namespace)
    .filter((cm) => cm.metadata?.labels?.member === 'true')
    .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
  await ensure('roster', Object.fromEntries(members.map((cm) => [cm.metadata!.name!, cm.data?.role ?? ''])));
  await ensure('roster-status', { members: String(members.length) });
}

let scheduled: NodeJS.Timeout | undefined;
let running = Promise.resolve();
// Every ConfigMap event schedules a reconcile (the echoes of its own writes included, as a watch of
// owned objects does); one runs at a time, and a failed one waits for the next event.
const schedule = () => {
  if (scheduled) return;
  scheduled = setTimeout(() => {
    scheduled = undefined;
    running = running.then(reconcile).catch(() => undefined);
  }, RECONCILE_DELAY_MS);
};
informer.on('add', schedule);
informer.on('update', schedule);
informer.on('delete', schedule);
informer.on('error', () => setTimeout(() => void informer.start(), 200));
await informer.start();
