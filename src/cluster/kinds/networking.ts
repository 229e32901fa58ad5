/**
 * Kinds a controller author's manifests commonly carry beside workloads, stored and served only (no
 * controller acts on them): networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy,
 * discovery.k8s.io/v1 EndpointSlice, autoscaling/v2 HorizontalPodAutoscaler; plus the
 * authorization.k8s.io/v1 self-reviews `kubectl auth can-i` creates, answered (allowed: every request
 * carrying the cluster's token may do anything, as RBAC is not enforced here) and never stored.
 */
import { isObject, type KubeObject } from '../../model/object-key.js';
import type { Conversion, ResourceDefinition } from '../registry.js';
import { builtinKind } from './define.js';

/** SelfSubjectAccessReview: allowed, as the embedded cluster authorizes every authenticated request. */
function accessReviewStatus(): Record<string, unknown> {
  return { allowed: true, reason: 'kperturb embedded cluster: RBAC is not enforced, every authenticated request is allowed' };
}

/** SelfSubjectRulesReview (`kubectl auth can-i --list`): every verb on every resource. */
function rulesReviewStatus(): Record<string, unknown> {
  return {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  };
}

type Obj = Record<string, unknown>;
const objectOf = (v: unknown): Obj => (isObject(v) ? v : {});

/**
 * autoscaling/v1 HorizontalPodAutoscaler (what `kubectl autoscale` writes) to and from the stored v2
 * form, as pkg/apis/autoscaling/v1's conversion does for the CPU target: v1's
 * targetCPUUtilizationPercentage is v2's cpu Resource metric with an Utilization target. Other v2
 * metrics have no v1 field (Kubernetes keeps them in an annotation; here a v1 read drops them and a
 * v1 write keeps the stored ones it does not mention).
 */
export const HPA_V1_CONVERSION: Conversion = {
  toStorage(obj) {
    const { targetCPUUtilizationPercentage: cpu, ...spec } = objectOf(obj.spec);
    const { currentCPUUtilizationPercentage: current, ...status } = objectOf(obj.status);
    const out: KubeObject = {
      ...obj,
      spec: {
        ...spec,
        ...(typeof cpu === 'number'
          ? { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpu } } }] }
          : {}),
      },
    };
    if (obj.status !== undefined) {
      out.status = {
        ...status,
        ...(typeof current === 'number' ? { currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: current } } }] } : {}),
      };
    }
    return out;
  },
  fromStorage(obj) {
    const { metrics, ...spec } = objectOf(obj.spec);
    const { currentMetrics, conditions: _conditions, ...status } = objectOf(obj.status);
    const cpu = (list: unknown, field: 'target' | 'current'): number | undefined => {
      const m = (Array.isArray(list) ? list : []).find((x) => isObject(x) && x.type === 'Resource' && objectOf(x.resource).name === 'cpu');
      const value = objectOf(objectOf(objectOf(m).resource)[field]).averageUtilization;
      return typeof value === 'number' ? value : undefined;
    };
    const target = cpu(metrics, 'target');
    const current = cpu(currentMetrics, 'current');
    const out: KubeObject = { ...obj, spec: { ...spec, ...(target !== undefined ? { targetCPUUtilizationPercentage: target } : {}) } };
    if (obj.status !== undefined) out.status = { ...status, ...(current !== undefined ? { currentCPUUtilizationPercentage: current } : {}) };
    return out;
  },
};

export function networkingDefinitions(): ResourceDefinition[] {
  const review = (resource: string, kind: string, status: (obj: KubeObject) => Record<string, unknown>): ResourceDefinition =>
    builtinKind({ group: 'authorization.k8s.io', resource, kind, namespaced: false, verbs: ['create'], strategy: { review: status } });
  return [
    builtinKind({ group: 'networking.k8s.io', resource: 'ingresses', kind: 'Ingress', namespaced: true, shortNames: ['ing'], subresources: ['status'] }),
    builtinKind({ group: 'networking.k8s.io', resource: 'ingressclasses', kind: 'IngressClass', namespaced: false }),
    builtinKind({ group: 'networking.k8s.io', resource: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true, shortNames: ['netpol'] }),
    builtinKind({ group: 'discovery.k8s.io', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true }),
    builtinKind({
      group: 'autoscaling',
      versions: ['v2', 'v1'],
      versionConversions: { v1: HPA_V1_CONVERSION },
      resource: 'horizontalpodautoscalers',
      kind: 'HorizontalPodAutoscaler',
      namespaced: true,
      shortNames: ['hpa'],
      categories: ['all'],
      subresources: ['status'],
    }),
    review('selfsubjectaccessreviews', 'SelfSubjectAccessReview', accessReviewStatus),
    review('selfsubjectrulesreviews', 'SelfSubjectRulesReview', rulesReviewStatus),
  ];
}
