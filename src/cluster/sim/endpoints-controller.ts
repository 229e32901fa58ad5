/**
 * The Endpoints controller (pkg/controller/endpoint), simplified: for every Service with a selector,
 * an Endpoints object of the same name whose single subset lists the selected pods that have an IP -
 * ready ones under `addresses`, the others under `notReadyAddresses` (all under `addresses` with
 * publishNotReadyAddresses) - with the service's ports, named target ports resolved against each
 * pod's container ports. Terminal and terminating pods are left out. Labels: the Service's, plus
 * endpoints.kubernetes.io/managed-by=endpoint-controller (and service.kubernetes.io/headless);
 * annotation endpoints.kubernetes.io/last-change-trigger-time. An Endpoints object whose Service is
 * gone is deleted. Services without a selector are left to their owner, as in Kubernetes.
 * Not simulated: EndpointSlices, and one subset per distinct port set.
 */
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import { clone, deepEqual, isBeingDeleted, isPodReady, isPodTerminal, mapSelectorMatches, now, spec, status, str } from './objects.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

export class EndpointsController {
  private readonly enqueue: (key: string, delayMs?: number) => void;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly services: Informer,
    private readonly pods: Informer,
    private readonly endpoints: Informer,
  ) {
    this.enqueue = runner.register('endpoints', (key) => this.sync(key));
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<EndpointsController | undefined> {
    const [services, pods, endpoints] = await Promise.all([
      ctx.informers.forKind('Service', 'v1'),
      ctx.informers.forKind('Pod', 'v1'),
      ctx.informers.forKind('Endpoints', 'v1'),
    ]);
    if (!services || !pods || !endpoints) return undefined;
    const c = new EndpointsController(ctx, runner, services, pods, endpoints);
    services.subscribe((_type, svc) => c.enqueue(`${svc.metadata!.namespace}/${svc.metadata!.name}`));
    pods.onChange((_type, pod, old) => {
      for (const svc of services.list(pod.metadata?.namespace)) {
        const sel = spec(svc).selector;
        if (mapSelectorMatches(sel, pod.metadata?.labels) || (old && mapSelectorMatches(sel, old.metadata?.labels)))
          c.enqueue(`${svc.metadata!.namespace}/${svc.metadata!.name}`);
      }
    });
    // checkLeftoverEndpoints: only at start; Endpoints created later without a Service are left alone.
    for (const ep of endpoints.list())
      if (!services.get(ep.metadata?.namespace, ep.metadata!.name!)) c.enqueue(`${ep.metadata!.namespace}/${ep.metadata!.name}`);
    return c;
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const svc = this.services.get(namespace, name);
    const current = this.endpoints.get(namespace, name);
    if (!svc) {
      // The Service is gone: its Endpoints go too (also those of a selector-less Service, as in Kubernetes).
      if (current)
        await this.ctx.api.delete(this.endpoints.info, namespace, name, { preconditions: { uid: current.metadata?.uid } }).catch((err: unknown) => {
          if (!isStatus(err, 404, 409)) throw err;
        });
      return;
    }
    const selector = spec(svc).selector;
    if (!isObject(selector) || Object.keys(selector).length === 0 || str(spec(svc).type) === 'ExternalName' || isBeingDeleted(svc)) return;
    const publishNotReady = spec(svc).publishNotReadyAddresses === true;
    const selected = this.pods
      .list(namespace)
      .filter((p) => mapSelectorMatches(selector, p.metadata?.labels) && !isPodTerminal(p) && !isBeingDeleted(p) && str(status(p).podIP));
    const address = (p: KubeObject) => ({
      ip: str(status(p).podIP),
      ...(str(spec(p).hostname) ? { hostname: str(spec(p).hostname) } : {}),
      nodeName: str(spec(p).nodeName),
      targetRef: { kind: 'Pod', namespace, name: p.metadata!.name!, uid: p.metadata!.uid! },
    });
    const ready = selected.filter((p) => publishNotReady || isPodReady(p)).map(address);
    const notReady = selected.filter((p) => !publishNotReady && !isPodReady(p)).map(address);
    const rawPorts = spec(svc).ports;
    const svcPorts = Array.isArray(rawPorts) ? rawPorts.filter(isObject) : [];
    const ports = svcPorts.map((sp) => {
      const target = sp.targetPort ?? sp.port;
      let port = typeof target === 'number' ? target : Number(target);
      if (typeof target === 'string' && !/^\d+$/.test(target)) port = this.namedPort(selected[0], target) ?? 0;
      return { ...(sp.name ? { name: sp.name } : {}), port, protocol: str(sp.protocol, 'TCP'), ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) };
    });
    const subsets =
      ready.length + notReady.length > 0
        ? [{ ...(ready.length ? { addresses: ready } : {}), ...(notReady.length ? { notReadyAddresses: notReady } : {}), ports }]
        : undefined;
    const labels: Record<string, string> = { ...(svc.metadata?.labels ?? {}), 'endpoints.kubernetes.io/managed-by': 'endpoint-controller' };
    if (spec(svc).clusterIP === 'None') labels['service.kubernetes.io/headless'] = '';
    const annotations = { 'endpoints.kubernetes.io/last-change-trigger-time': now() };
    if (!current) {
      await this.ctx.api
        .create(this.endpoints.info, namespace, { metadata: { name, namespace, labels, annotations }, ...(subsets ? { subsets } : {}) })
        .then((created) => this.endpoints.waitForWrite(created))
        .catch((err: unknown) => {
          if (!isStatus(err, 409)) throw err;
        });
      return;
    }
    if (deepEqual(current.subsets ?? null, subsets ?? null) && deepEqual(current.metadata?.labels ?? {}, labels)) return;
    const next = clone(current);
    next.metadata!.labels = labels;
    next.metadata!.annotations = { ...(next.metadata?.annotations ?? {}), ...annotations };
    if (subsets) next.subsets = subsets;
    else delete next.subsets;
    const written = await this.ctx.api.update(this.endpoints.info, next);
    await this.endpoints.waitForWrite(written);
  }

  private namedPort(pod: KubeObject | undefined, name: string): number | undefined {
    const containers = pod && Array.isArray(spec(pod).containers) ? (spec(pod).containers as unknown[]).filter(isObject) : [];
    for (const c of containers) {
      for (const p of Array.isArray(c.ports) ? c.ports.filter(isObject) : [])
        if (p.name === name && typeof p.containerPort === 'number') return p.containerPort;
    }
    return undefined;
  }
}
