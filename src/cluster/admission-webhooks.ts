/**
 * Validating admission webhooks, called as kube-apiserver's ValidatingAdmissionWebhook plugin calls
 * them (k8s.io/apiserver/pkg/admission/plugin/webhook): for a create, update, patch or delete, every
 * webhook of every ValidatingWebhookConfiguration whose rules (operations, apiGroups, apiVersions,
 * resources with subresources, scope), namespaceSelector and objectSelector match gets an
 * AdmissionReview (admission.k8s.io/v1, or v1beta1 when that is all it takes) over HTTPS. A denial
 * refuses the request with the webhook's status (at least 400) and kube-apiserver's message,
 * `admission webhook "NAME" denied the request: ...`; a call that fails is refused with 500 under
 * failurePolicy Fail (the default) and ignored under Ignore; warnings are passed on.
 *
 * Where the call goes: a `clientConfig.url` as given; a `clientConfig.service` to the webhook
 * server of the controller under test on 127.0.0.1 (`WebhookServer`, kperturb.yaml's
 * `controller.webhookServer`: no Service routes to a process out of a pod), trusting the
 * configuration's caBundle or else the certificate kperturb gave that server. Without a webhook
 * server, a webhook named by Service is not called, as before webhooks were (docs/embedded-cluster.md).
 * Not done: mutating webhooks, matchConditions, reinvocation, deletecollection.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'node:https';
import { isObject, type KubeObject } from '../model/object-key.js';
import { matchesLabelSelector, asLabelSelector } from '../model/label-selector.js';
import { ApiError, internalError } from './api-error.js';
import type { ResourceDefinition } from './registry.js';
import type { ObjectStore } from './store.js';

/** The controller's admission webhook server, reached on 127.0.0.1. */
export interface WebhookServer {
  port: number;
  /** PEM certificate its serving certificate chains to (kperturb made both). */
  caPem: string;
}

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes {
  def: ResourceDefinition;
  /** The version of the request (the objects are in its form). */
  version: string;
  subresource?: string | undefined;
  operation: AdmissionOperation;
  namespace?: string | undefined;
  name: string;
  object?: KubeObject | undefined;
  oldObject?: KubeObject | undefined;
  dryRun: boolean;
}

interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

interface Webhook {
  name: string;
  clientConfig?: { url?: string; caBundle?: string; service?: { namespace?: string; name?: string; path?: string; port?: number } };
  rules?: Rule[];
  failurePolicy?: string;
  namespaceSelector?: unknown;
  objectSelector?: unknown;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
}

const CONFIGURATIONS = 'validatingwebhookconfigurations.admissionregistration.k8s.io';
/** A configuration's own kind is never sent to webhooks, so a bad webhook cannot lock itself in (kube-apiserver's rule). */
const EXEMPT_GROUP = 'admissionregistration.k8s.io';

const has = (list: readonly string[] | undefined, value: string): boolean => (list ?? []).some((v) => v === '*' || v === value);

/** Does a rule's `resources` entry name this resource and subresource (`*`, `*\/*`, `r/*`, `*\/status`)? */
function resourceMatches(entries: readonly string[] | undefined, resource: string, subresource: string | undefined): boolean {
  return (entries ?? []).some((entry) => {
    const [r, s] = entry.split('/', 2) as [string, string | undefined];
    if (r !== '*' && r !== resource) return false;
    if (subresource === undefined) return s === undefined;
    return s === '*' || s === subresource;
  });
}

function ruleMatches(rule: Rule, a: Pick<AdmissionAttributes, 'operation' | 'def' | 'version' | 'subresource'>): boolean {
  if (!has(rule.operations, a.operation) || !has(rule.apiGroups, a.def.group) || !has(rule.apiVersions, a.version)) return false;
  if (!resourceMatches(rule.resources, a.def.resource, a.subresource)) return false;
  const scope = rule.scope ?? '*';
  return scope === '*' || (scope === 'Namespaced') === a.def.namespaced;
}

const labelsOf = (o: KubeObject | undefined): Record<string, string> | undefined => o?.metadata?.labels as Record<string, string> | undefined;

export class AdmissionWebhooks {
  constructor(
    private readonly store: ObjectStore,
    private readonly server: WebhookServer | undefined,
  ) {}

  /**
   * The webhooks whose rules take this request and that can be reached, in the configurations' name
   * order, then their own; the selectors, which need the objects, are checked by `validate`.
   */
  candidates(a: Omit<AdmissionAttributes, 'object' | 'oldObject' | 'name'>): Webhook[] {
    if (a.def.group === EXEMPT_GROUP) return [];
    const configs = this.store.list(CONFIGURATIONS);
    if (configs.length === 0) return [];
    const out: Webhook[] = [];
    for (const config of [...configs].sort((x, y) => String(x.metadata?.name).localeCompare(String(y.metadata?.name)))) {
      const hooks = Array.isArray(config.webhooks) ? (config.webhooks as Webhook[]) : [];
      for (const hook of hooks) {
        if (!(hook.rules ?? []).some((r) => ruleMatches(r, a))) continue;
        if (hook.clientConfig?.url === undefined && (hook.clientConfig?.service === undefined || !this.server)) continue;
        out.push(hook);
      }
    }
    return out;
  }

  private selected(hook: Webhook, a: AdmissionAttributes): boolean {
    const objectSelector = asLabelSelector(hook.objectSelector);
    if (objectSelector && !matchesLabelSelector(objectSelector, labelsOf(a.object) ?? {}) && !matchesLabelSelector(objectSelector, labelsOf(a.oldObject) ?? {}))
      return false;
    const namespaceSelector = asLabelSelector(hook.namespaceSelector);
    if (!namespaceSelector) return true;
    if (a.def.group === '' && a.def.resource === 'namespaces') return matchesLabelSelector(namespaceSelector, labelsOf(a.object ?? a.oldObject) ?? {});
    if (!a.def.namespaced || a.namespace === undefined) return true;
    const ns = this.store.get('namespaces', undefined, a.namespace);
    return matchesLabelSelector(namespaceSelector, labelsOf(ns) ?? {});
  }

  /** Sends the request to every matching webhook; throws the refusal. Returns the webhooks' warnings. */
  async validate(a: AdmissionAttributes, candidates: readonly Webhook[] = this.candidates(a)): Promise<string[]> {
    const warnings: string[] = [];
    for (const hook of candidates) if (this.selected(hook, a)) warnings.push(...(await this.call(hook, a)));
    return warnings;
  }

  private async call(hook: Webhook, a: AdmissionAttributes): Promise<string[]> {
    const client = hook.clientConfig!;
    const viaService = client.url === undefined;
    const url = viaService ? `https://127.0.0.1:${this.server!.port}${client.service?.path ?? ''}` : client.url!;
    const ca = client.caBundle ? Buffer.from(client.caBundle, 'base64').toString('utf8') : viaService ? this.server!.caPem : undefined;
    const version = (hook.admissionReviewVersions ?? ['v1']).find((v) => v === 'v1' || v === 'v1beta1');
    if (!version)
      return this.failed(hook, url, `the webhook takes no AdmissionReview version this server sends (v1, v1beta1): ${String(hook.admissionReviewVersions)}`);
    const uid = randomUUID();
    const review = { apiVersion: `admission.k8s.io/${version}`, kind: 'AdmissionReview', request: reviewRequest(uid, a) };
    let answer: unknown;
    try {
      answer = await post(url, JSON.stringify(review), ca, viaService, (hook.timeoutSeconds ?? 10) * 1000);
    } catch (e) {
      return this.failed(hook, url, (e as Error).message);
    }
    const response = isObject(answer) && isObject(answer.response) ? answer.response : undefined;
    if (!response || response.uid !== uid || typeof response.allowed !== 'boolean')
      return this.failed(hook, url, `expected a response with uid ${uid} and allowed, got ${JSON.stringify(answer).slice(0, 200)}`);
    const warnings = Array.isArray(response.warnings) ? response.warnings.filter((w): w is string => typeof w === 'string') : [];
    if (response.allowed) return warnings;
    throw denied(hook.name, isObject(response.status) ? response.status : {});
  }

  private failed(hook: Webhook, url: string, why: string): string[] {
    if (hook.failurePolicy === 'Ignore') return [];
    throw internalError(`failed calling webhook "${hook.name}": failed to call webhook: Post "${url}": ${why}`);
  }
}

function reviewRequest(uid: string, a: AdmissionAttributes): Record<string, unknown> {
  const gvk = { group: a.def.group, version: a.version, kind: a.def.kind };
  const gvr = { group: a.def.group, version: a.version, resource: a.def.resource };
  return {
    uid,
    kind: gvk,
    resource: gvr,
    ...(a.subresource ? { subResource: a.subresource } : {}),
    requestKind: gvk,
    requestResource: gvr,
    ...(a.subresource ? { requestSubResource: a.subresource } : {}),
    name: a.name,
    ...(a.namespace !== undefined ? { namespace: a.namespace } : {}),
    operation: a.operation,
    userInfo: { username: 'kperturb', groups: ['system:masters', 'system:authenticated'] },
    object: a.object ?? null,
    oldObject: a.oldObject ?? null,
    dryRun: a.dryRun,
    options: { apiVersion: 'meta.k8s.io/v1', kind: a.operation === 'CREATE' ? 'CreateOptions' : a.operation === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions' },
  };
}

/** kube-apiserver's ToStatusErr: the webhook's status, a code of at least 400, the message prefixed. */
function denied(name: string, status: Record<string, unknown>): ApiError {
  const code = typeof status.code === 'number' && status.code >= 400 ? status.code : 400;
  const deniedBy = `admission webhook "${name}" denied the request`;
  const message =
    typeof status.message === 'string' && status.message ? status.message : typeof status.reason === 'string' && status.reason ? status.reason : '';
  const reason = typeof status.reason === 'string' ? status.reason : '';
  const details = isObject(status.details) ? (status.details as ConstructorParameters<typeof ApiError>[3]) : undefined;
  return new ApiError(code, reason, message ? `${deniedBy}: ${message}` : `${deniedBy} without explanation`, details);
}

function post(url: string, body: string, ca: string | undefined, skipHostname: boolean, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body) },
        ...(ca ? { ca } : {}),
        // A Service reached on 127.0.0.1 has no name to check; the chain to the given CA still is.
        ...(skipHostname ? { checkServerIdentity: () => undefined } : {}),
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) >= 300) return reject(new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`));
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new Error(`the answer is not JSON: ${text.slice(0, 200)}`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`context deadline exceeded (${timeoutMs / 1000} s)`)));
    req.on('error', reject);
    req.end(body);
  });
}
