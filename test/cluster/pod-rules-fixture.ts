/**
 * Pod specs operators get wrong (probes, quantities, tolerations, affinity, security contexts) and the
 * 422 kube-apiserver 1.33 answers: used by test/cluster/pod-rules.test.ts (embedded cluster) and
 * test/real/pod-rules.real.ts (both side by side).
 */
export interface PodRuleCase {
  name: string;
  path: string;
  body: Record<string, unknown>;
  message: string;
}

const container = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ name: 'app', image: 'nginx', ...extra });
const pod = (name: string, spec: Record<string, unknown>, c: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [container(c)], ...spec },
});
const deployment = (name: string, podSpec: Record<string, unknown>, c: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [container(c)], ...podSpec } },
  },
});

const PODS = '/api/v1/namespaces/default/pods';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';

export const POD_RULE_CASES: PodRuleCase[] = [
  {
    name: 'probe with two handlers',
    path: PODS,
    body: pod('p1', {}, { livenessProbe: { exec: { command: ['true'] }, tcpSocket: { port: 80 } } }),
    message: 'Pod "p1" is invalid: spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type',
  },
  {
    name: 'probe without a handler',
    path: PODS,
    body: pod('p2', {}, { readinessProbe: { periodSeconds: 5 } }),
    message: 'Pod "p2" is invalid: spec.containers[0].readinessProbe: Required value: must specify a handler type',
  },
  {
    name: 'liveness successThreshold',
    path: PODS,
    body: pod('p3', {}, { livenessProbe: { httpGet: { port: 80 }, successThreshold: 2 } }),
    message: 'Pod "p3" is invalid: spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
  },
  {
    name: 'request above its limit, in a Deployment template',
    path: DEPLOYMENTS,
    body: deployment('d1', {}, { resources: { requests: { cpu: '2000m' }, limits: { cpu: '1' } } }),
    message:
      'Deployment.apps "d1" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
  },
  {
    name: 'negative quantity',
    path: PODS,
    body: pod('p4', {}, { resources: { requests: { memory: '-1Gi' } } }),
    message: 'Pod "p4" is invalid: spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0',
  },
  {
    name: 'toleration: Exists with a value',
    path: PODS,
    body: pod('p5', { tolerations: [{ key: 'k', operator: 'Exists', value: 'v', effect: 'NoSchedule' }] }),
    message: 'Pod "p5" is invalid: spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'',
  },
  {
    name: 'toleration: unknown operator and effect',
    path: PODS,
    body: pod('p6', { tolerations: [{ key: 'k', operator: 'In', effect: 'Never' }] }),
    message:
      'Pod "p6" is invalid: [spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists", spec.tolerations[0].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"]',
  },
  {
    name: 'node affinity operator',
    path: PODS,
    body: pod('p7', {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Is', values: ['a'] }] }] },
        },
      },
    }),
    message:
      'Pod "p7" is invalid: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Is": not a valid selector operator',
  },
  {
    name: 'pod anti-affinity: In without values',
    path: PODS,
    body: pod('p8', {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchExpressions: [{ key: 'app', operator: 'In' }] } },
          ],
        },
      },
    }),
    message:
      "Pod \"p8\" is invalid: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
  },
  {
    name: 'security context user id',
    path: PODS,
    body: pod('p9', {}, { securityContext: { runAsUser: -1 } }),
    message: 'Pod "p9" is invalid: spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive',
  },
];
