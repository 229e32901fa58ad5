/**
 * What kube-apiserver refuses in core types that a CRD copies without saying so. An operator's CRD
 * embeds core types (a PodSpec in a pod template override, tolerations, affinity terms, Service
 * ports) with the OpenAPI's shapes but not kube-apiserver's validation, which lives in Go code
 * (kubernetes/kubernetes pkg/apis/core/validation/validation.go, pkg/apis/apps/validation): a weight
 * of 0, `tolerations: [{}]`, a free string where the field takes a few values. The CRD takes them;
 * the API server refuses the StatefulSet, its pod or the Service the operator writes them into, and
 * the step tests nothing of its field. So the schema explore generates from is tightened where such
 * a subtree is a core type: its fields get the enum and bounds the validation gives, and a new item
 * the properties it needs.
 *
 * Matching is by structure against the built-in OpenAPI's definitions, looser than k8s-types.ts's (an
 * operator's CRD is made from the core types of an older Kubernetes, which lack newer fields): an
 * object whose properties are all the definition's, of compatible types, and at least half of them.
 * Pure: the schema and the definitions in, a tightened copy out.
 */
import { isObject } from '../../src/model/object-key.js';
import type { NodeType, SchemaNode } from './schema.js';

export interface CoreFieldRule {
  /** The values kube-apiserver takes (only those it takes in every context explore writes into). */
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
}

export interface CoreTypeRule {
  fields: Readonly<Record<string, CoreFieldRule>>;
  /** Properties an item of this type needs though the OpenAPI does not require them. */
  required?: readonly string[];
}

const NONNEGATIVE: CoreFieldRule = { minimum: 0 };
const PORT: CoreFieldRule = { minimum: 1, maximum: 65535 };

/** Per OpenAPI v2 definition, kube-apiserver's validation of its fields (the functions named). */
export const CORE_RULES: Readonly<Record<string, CoreTypeRule>> = {
  // ValidatePreferredSchedulingTerms, validateWeightedPodAffinityTerms: "must be in the range 1-100".
  'io.k8s.api.core.v1.PreferredSchedulingTerm': { fields: { weight: { minimum: 1, maximum: 100 } } },
  'io.k8s.api.core.v1.WeightedPodAffinityTerm': { fields: { weight: { minimum: 1, maximum: 100 } } },
  // ValidateTolerations: "operator must be Exists when `key` is empty" (so a new toleration says
  // Exists: it tolerates every taint, which any pod may), operator Equal or Exists, a taint effect.
  'io.k8s.api.core.v1.Toleration': {
    fields: { operator: { enum: ['Exists', 'Equal'] }, effect: { enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] } },
    required: ['operator'],
  },
  // validateRestartPolicy, validateDNSPolicy ('None' needs a dnsConfig with a nameserver: left out),
  // validatePreemptionPolicy.
  'io.k8s.api.core.v1.PodSpec': {
    fields: {
      // A StatefulSet's, Deployment's or DaemonSet's template takes Always only (apps validation:
      // `supported values: "Always"`), and that is where operators put the pod templates of their CRs.
      restartPolicy: { enum: ['Always'] },
      dnsPolicy: { enum: ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default'] },
      preemptionPolicy: { enum: ['PreemptLowerPriority', 'Never'] },
      terminationGracePeriodSeconds: NONNEGATIVE,
      activeDeadlineSeconds: { minimum: 1 },
    },
  },
  // validatePullPolicy, terminationMessagePolicy.
  'io.k8s.api.core.v1.Container': {
    fields: { imagePullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] }, terminationMessagePolicy: { enum: ['File', 'FallbackToLogsOnError'] } },
  },
  // validateContainerPorts: containerPort 1-65535; protocol.
  'io.k8s.api.core.v1.ContainerPort': { fields: { containerPort: PORT, hostPort: PORT, protocol: { enum: ['TCP', 'UDP', 'SCTP'] } } },
  // validateProbe: every count non-negative (0 is defaulted).
  'io.k8s.api.core.v1.Probe': {
    fields: {
      initialDelaySeconds: NONNEGATIVE,
      timeoutSeconds: NONNEGATIVE,
      periodSeconds: NONNEGATIVE,
      successThreshold: NONNEGATIVE,
      failureThreshold: NONNEGATIVE,
      terminationGracePeriodSeconds: { minimum: 1 },
    },
  },
  // ValidatePodSecurityContext: fsGroupChangePolicy; ids non-negative.
  'io.k8s.api.core.v1.PodSecurityContext': {
    fields: { fsGroupChangePolicy: { enum: ['OnRootMismatch', 'Always'] }, runAsUser: NONNEGATIVE, runAsGroup: NONNEGATIVE, fsGroup: NONNEGATIVE },
  },
  'io.k8s.api.core.v1.SecurityContext': { fields: { runAsUser: NONNEGATIVE, runAsGroup: NONNEGATIVE } },
  // ValidateService: the types ('ExternalName' needs an externalName: left out), session affinity,
  // traffic policies, the IP family policy ('RequireDualStack' needs a dual-stack cluster: left out).
  'io.k8s.api.core.v1.ServiceSpec': {
    fields: {
      type: { enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] },
      sessionAffinity: { enum: ['None', 'ClientIP'] },
      externalTrafficPolicy: { enum: ['Cluster', 'Local'] },
      internalTrafficPolicy: { enum: ['Cluster', 'Local'] },
      ipFamilyPolicy: { enum: ['SingleStack', 'PreferDualStack'] },
    },
  },
  // validateServicePort: port 1-65535; a name when there is more than one port (a pushed one).
  'io.k8s.api.core.v1.ServicePort': { fields: { port: PORT, nodePort: PORT, protocol: { enum: ['TCP', 'UDP', 'SCTP'] } }, required: ['name'] },
  // ValidateStatefulSetSpec.
  'io.k8s.api.apps.v1.StatefulSetSpec': { fields: { podManagementPolicy: { enum: ['OrderedReady', 'Parallel'] }, minReadySeconds: NONNEGATIVE } },
  'io.k8s.api.apps.v1.StatefulSetUpdateStrategy': { fields: { type: { enum: ['RollingUpdate', 'OnDelete'] } } },
  'io.k8s.api.apps.v1.DeploymentStrategy': { fields: { type: { enum: ['RollingUpdate', 'Recreate'] } } },
};

/**
 * `root` with kube-apiserver's rules applied where an object matches a definition of `definitions`
 * that CORE_RULES has: enum and bounds narrowed within the CRD's own (a rule the CRD's constraints
 * leave no value for is not applied), required properties added. Nodes no rule touches are shared.
 */
export function applyCoreRules(root: SchemaNode, definitions: Readonly<Record<string, unknown>>): SchemaNode {
  const candidates = Object.keys(CORE_RULES)
    .sort()
    .flatMap((name) => {
      const def = definitions[name];
      return isObject(def) && isObject(def.properties) ? [{ name, properties: def.properties, rule: CORE_RULES[name]! }] : [];
    });
  if (candidates.length === 0) return root;
  const visit = (node: SchemaNode): SchemaNode => {
    let out = node;
    const replace = (patch: Partial<SchemaNode>) => (out = { ...out, ...patch });
    if (node.properties) {
      const props = new Map([...node.properties].map(([k, child]) => [k, visit(child)] as const));
      if ([...props].some(([k, v]) => v !== node.properties!.get(k))) replace({ properties: props });
      const match = node.type === 'object' ? bestMatch(node, candidates, definitions) : undefined;
      if (match) {
        const tightened = new Map(out.properties);
        for (const [field, rule] of Object.entries(match.rule.fields)) {
          const child = tightened.get(field);
          const narrowed = child && narrow(child, rule);
          if (narrowed) tightened.set(field, narrowed);
        }
        const required = [...new Set([...(out.required ?? []), ...(match.rule.required ?? []).filter((r) => tightened.has(r))])];
        replace({ properties: tightened, ...(required.length > 0 ? { required } : {}) });
      }
    }
    if (node.items) {
      const items = visit(node.items);
      if (items !== node.items) replace({ items });
    }
    if (node.branches) {
      const branches = node.branches.map(visit);
      if (branches.some((b, i) => b !== node.branches![i])) replace({ branches });
    }
    return out;
  };
  return visit(root);
}

interface Candidate {
  name: string;
  properties: Record<string, unknown>;
  rule: CoreTypeRule;
}

/**
 * The definition `node` fits best: the largest share of its properties present, then the one whose
 * name ends with the property's (a StatefulSet's `updateStrategy`), then the first by name.
 */
function bestMatch(node: SchemaNode, candidates: readonly Candidate[], definitions: Readonly<Record<string, unknown>>): Candidate | undefined {
  const names = [...node.properties!.keys()];
  if (names.length < 2) return undefined;
  const last = String(node.path.at(-1)).toLowerCase();
  const score = (c: Candidate) => names.length / Object.keys(c.properties).length + (c.name.toLowerCase().endsWith(last) ? 0.5 : 0);
  let best: Candidate | undefined;
  for (const c of candidates) {
    if (names.length * 2 < Object.keys(c.properties).length) continue;
    if (!names.every((n) => n in c.properties && compatible(node.properties!.get(n)!, c.properties[n], definitions))) continue;
    if (!best || score(c) > score(best)) best = c;
  }
  return best;
}

/**
 * A CRD property against the definition's property: by type, and an object against the definition a
 * `$ref` names by its property names one level down (a StatefulSet's `rollingUpdate` has `partition`,
 * a Deployment's `maxSurge`). A `$ref` to no object definition is a Quantity, an IntOrString, a Time.
 */
function compatible(node: SchemaNode, def: unknown, definitions: Readonly<Record<string, unknown>>): boolean {
  const type: NodeType = node.type;
  if (!isObject(def)) return false;
  if (type === 'opaque' || type === 'any-of') return true;
  if (typeof def.$ref === 'string') {
    const target = definitions[def.$ref.slice(def.$ref.lastIndexOf('/') + 1)];
    if (type === 'object' && node.properties && isObject(target) && isObject(target.properties)) {
      const props = target.properties;
      return [...node.properties.keys()].every((k) => k in props);
    }
    return type === 'object' || type === 'int-or-string' || type === 'string' || type === 'integer' || type === 'map';
  }
  switch (def.type) {
    case 'string':
      return type === 'string' || type === 'int-or-string';
    case 'integer':
    case 'number':
      return type === 'integer' || type === 'number';
    case 'boolean':
      return type === 'boolean';
    case 'array':
      return type === 'array';
    case 'object':
      return type === 'object' || type === 'map';
    default:
      return false;
  }
}

/** `node` narrowed by `rule` within its own constraints; undefined when the rule changes nothing or leaves no value. */
function narrow(node: SchemaNode, rule: CoreFieldRule): SchemaNode | undefined {
  if (rule.enum && node.type === 'string') {
    const allowed = node.enum ? rule.enum.filter((v) => node.enum!.includes(v)) : [...rule.enum];
    if (allowed.length === 0 || (node.enum && allowed.length === node.enum.length)) return undefined;
    return { ...node, enum: allowed };
  }
  if ((rule.minimum !== undefined || rule.maximum !== undefined) && (node.type === 'integer' || node.type === 'number')) {
    const minimum = Math.max(node.minimum ?? -Infinity, rule.minimum ?? -Infinity);
    const maximum = Math.min(node.maximum ?? Infinity, rule.maximum ?? Infinity);
    if (minimum > maximum || (minimum === (node.minimum ?? -Infinity) && maximum === (node.maximum ?? Infinity))) return undefined;
    const out: SchemaNode = { ...node, ...(Number.isFinite(minimum) ? { minimum } : {}), ...(Number.isFinite(maximum) ? { maximum } : {}) };
    // A bound the rule raised is inclusive, as kube-apiserver's are.
    if (minimum !== node.minimum) delete out.exclusiveMinimum;
    if (maximum !== node.maximum) delete out.exclusiveMaximum;
    return out;
  }
  return undefined;
}
