/**
 * The ServiceAccount controller (pkg/controller/serviceaccount): every active namespace has a
 * ServiceAccount named `default`, re-created if deleted. (The root-CA ConfigMap kube-root-ca.crt that
 * a real cluster also publishes in every namespace is not simulated: the embedded server has no CA.)
 */
import type { Informer } from '../../kube/informer.js';
import { isBeingDeleted, status, str } from './objects.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

export class ServiceAccountController {
  private readonly enqueue: (key: string, delayMs?: number) => void;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly namespaces: Informer,
    private readonly accounts: Informer,
  ) {
    this.enqueue = runner.register('serviceaccount', (key) => this.sync(key));
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<ServiceAccountController | undefined> {
    const [namespaces, accounts] = await Promise.all([ctx.informers.forKind('Namespace', 'v1'), ctx.informers.forKind('ServiceAccount', 'v1')]);
    if (!namespaces || !accounts) return undefined;
    const c = new ServiceAccountController(ctx, runner, namespaces, accounts);
    namespaces.subscribe((type, ns) => {
      if (type !== 'DELETED') c.enqueue(ns.metadata!.name!);
    });
    accounts.onChange((type, sa) => {
      if (type === 'DELETED' && sa.metadata?.name === 'default') c.enqueue(sa.metadata.namespace!);
    });
    return c;
  }

  private async sync(namespace: string): Promise<void> {
    const ns = this.namespaces.get(undefined, namespace);
    if (!ns || isBeingDeleted(ns) || str(status(ns).phase, 'Active') !== 'Active') return;
    if (this.accounts.get(namespace, 'default')) return;
    try {
      const created = await this.ctx.api.create(this.accounts.info, namespace, { metadata: { name: 'default', namespace } });
      await this.accounts.waitForWrite(created);
    } catch (err) {
      // 409: it exists; 403/404: the namespace started terminating meanwhile
      if (!isStatus(err, 409, 403, 404)) throw err;
    }
  }
}
