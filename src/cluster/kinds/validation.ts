/**
 * Kind-specific validation of the built-in kinds (pkg/apis/{core,apps,batch,policy,rbac}/validation), covering the rules a client
 * or controller is likely to trip: required fields, ranges, selectors that must match templates, and
 * immutable fields. Messages follow the real field paths and wording; Go-formatted values are printed
 * as JSON.
 */
import { jsonEqual } from '../../model/json-value.js';
import { asLabelSelector, matchesLabelSelector } from '../../model/label-selector.js';
import { isObject, type KubeObject } from '../../model/object-key.js';
import type { FieldError } from '../api-error.js';
import { labelKeyErrors, labelValueErrors } from '../selectors.js';
import { dns1123LabelErrors } from '../validation.js';
import { podSpecRuleErrors } from './pod-rules.js';
import { quantityBytes } from '../sim/volume-controller.js';

type Obj = Record<string, unknown>;

function objects(value: unknown): Obj[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function obj(value: unknown): Obj {
  return isObject(value) ? value : {};
}

function portErrors(value: unknown, field: string): FieldError[] {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535) {
    return [{ type: 'Invalid', field, value, detail: 'must be between 1 and 65535, inclusive' }];
  }
  return [];
}

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function validateContainers(list: unknown, field: string, required: boolean, volumes: ReadonlySet<string>, seen: Set<string>): FieldError[] {
  const errors: FieldError[] = [];
  const containers = Array.isArray(list) ? list : [];
  if (required && containers.length === 0) errors.push({ type: 'Required', field, detail: '' });
  containers.forEach((raw, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(raw)) {
      errors.push({ type: 'Invalid', field: at, value: raw, detail: 'must be an object' });
      return;
    }
    const name = raw.name;
    if (typeof name !== 'string' || name === '') errors.push({ type: 'Required', field: `${at}.name`, detail: '' });
    else {
      for (const detail of dns1123LabelErrors(name)) errors.push({ type: 'Invalid', field: `${at}.name`, value: name, detail });
      if (seen.has(name)) errors.push({ type: 'Duplicate', field: `${at}.name`, value: name, detail: '' });
      seen.add(name);
    }
    if (typeof raw.image !== 'string' || raw.image.trim() === '') errors.push({ type: 'Required', field: `${at}.image`, detail: '' });
    objects(raw.ports).forEach((p, j) => {
      errors.push(...portErrors(p.containerPort, `${at}.ports[${j}].containerPort`));
      if (p.protocol !== undefined && !PROTOCOLS.includes(p.protocol as string)) {
        errors.push({ type: 'NotSupported', field: `${at}.ports[${j}].protocol`, value: p.protocol, detail: 'supported values: "SCTP", "TCP", "UDP"' });
      }
    });
    objects(raw.volumeMounts).forEach((m, j) => {
      if (typeof m.name !== 'string' || m.name === '') errors.push({ type: 'Required', field: `${at}.volumeMounts[${j}].name`, detail: '' });
      else if (!volumes.has(m.name)) errors.push({ type: 'NotFound', field: `${at}.volumeMounts[${j}].name`, value: m.name, detail: '' });
      if (typeof m.mountPath !== 'string' || m.mountPath === '') errors.push({ type: 'Required', field: `${at}.volumeMounts[${j}].mountPath`, detail: '' });
    });
    objects(raw.env).forEach((e, j) => {
      if (typeof e.name !== 'string' || e.name === '') errors.push({ type: 'Required', field: `${at}.env[${j}].name`, detail: '' });
    });
  });
  return errors;
}

/** ValidatePodSpec (the parts clients trip): containers, volumes, restart and DNS policy. */
export function validatePodSpec(specValue: unknown, field: string, allowedRestartPolicies?: readonly string[]): FieldError[] {
  const spec = obj(specValue);
  const errors: FieldError[] = [];
  const volumes = new Set<string>();
  objects(spec.volumes).forEach((v, i) => {
    if (typeof v.name !== 'string' || v.name === '') errors.push({ type: 'Required', field: `${field}.volumes[${i}].name`, detail: '' });
    else {
      if (volumes.has(v.name)) errors.push({ type: 'Duplicate', field: `${field}.volumes[${i}].name`, value: v.name, detail: '' });
      for (const detail of dns1123LabelErrors(v.name)) errors.push({ type: 'Invalid', field: `${field}.volumes[${i}].name`, value: v.name, detail });
      volumes.add(v.name);
    }
  });
  const names = new Set<string>();
  errors.push(...validateContainers(spec.containers, `${field}.containers`, true, volumes, names));
  errors.push(...validateContainers(spec.initContainers, `${field}.initContainers`, false, volumes, names));
  const restart = spec.restartPolicy;
  const policies = allowedRestartPolicies ?? ['Always', 'OnFailure', 'Never'];
  if (restart !== undefined && !policies.includes(restart as string)) {
    errors.push({
      type: 'NotSupported',
      field: `${field}.restartPolicy`,
      value: restart,
      detail: `supported values: ${policies.map((p) => JSON.stringify(p)).join(', ')}`,
    });
  }
  const dns = spec.dnsPolicy;
  const dnsPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
  if (dns !== undefined && !dnsPolicies.includes(dns as string)) {
    errors.push({
      type: 'NotSupported',
      field: `${field}.dnsPolicy`,
      value: dns,
      detail: `supported values: ${dnsPolicies.map((p) => JSON.stringify(p)).join(', ')}`,
    });
  }
  const grace = spec.terminationGracePeriodSeconds;
  if (grace !== undefined && (typeof grace !== 'number' || !Number.isInteger(grace))) {
    errors.push({ type: 'Invalid', field: `${field}.terminationGracePeriodSeconds`, value: grace, detail: 'must be an integer' });
  }
  errors.push(...podSpecRuleErrors(spec, field));
  return errors;
}

export function validatePod(pod: KubeObject): FieldError[] {
  return validatePodSpec(pod.spec, 'spec');
}

const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** ValidatePodUpdate: a pod's spec is immutable except images, activeDeadlineSeconds and added tolerations. */
export function validatePodUpdate(pod: KubeObject, old: KubeObject): FieldError[] {
  const errors = validatePod(pod);
  const mutable = (specValue: unknown, other: unknown): Obj => {
    const spec = { ...obj(specValue) };
    const otherSpec = obj(other);
    const withImagesOf = (list: unknown, from: unknown): unknown =>
      Array.isArray(list)
        ? list.map((c, i) =>
            isObject(c) ? { ...c, image: isObject((from as unknown[] | undefined)?.[i]) ? ((from as Obj[])[i]!.image ?? c.image) : c.image } : c,
          )
        : list;
    spec.containers = withImagesOf(spec.containers, otherSpec.containers);
    spec.initContainers = withImagesOf(spec.initContainers, otherSpec.initContainers);
    delete spec.activeDeadlineSeconds;
    delete spec.tolerations;
    return spec;
  };
  if (!jsonEqual(mutable(pod.spec, old.spec), mutable(old.spec, old.spec))) {
    errors.push({ type: 'Forbidden', field: 'spec', detail: POD_UPDATE_FORBIDDEN });
  }
  const oldTolerations = objects(obj(old.spec).tolerations);
  const newTolerations = objects(obj(pod.spec).tolerations);
  if (!oldTolerations.every((t) => newTolerations.some((n) => jsonEqual(n, t)))) {
    errors.push({ type: 'Forbidden', field: 'spec.tolerations', detail: 'existing toleration can not be modified except its tolerationSeconds' });
  }
  return errors;
}

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

export function validateService(svc: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = obj(svc.spec);
  const errors: FieldError[] = [];
  if (!SERVICE_TYPES.includes(spec.type as string)) {
    errors.push({
      type: 'NotSupported',
      field: 'spec.type',
      value: spec.type,
      detail: 'supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    });
  }
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  if (ports.length === 0 && spec.type !== 'ExternalName' && spec.clusterIP !== 'None') errors.push({ type: 'Required', field: 'spec.ports', detail: '' });
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const port = obj(p);
    if (ports.length > 1 && (typeof port.name !== 'string' || port.name === '')) errors.push({ type: 'Required', field: `spec.ports[${i}].name`, detail: '' });
    if (typeof port.name === 'string' && port.name !== '') {
      if (names.has(port.name)) errors.push({ type: 'Duplicate', field: `spec.ports[${i}].name`, value: port.name, detail: '' });
      names.add(port.name);
    }
    errors.push(...portErrors(port.port, `spec.ports[${i}].port`));
    if (!PROTOCOLS.includes(port.protocol as string)) {
      errors.push({ type: 'NotSupported', field: `spec.ports[${i}].protocol`, value: port.protocol, detail: 'supported values: "SCTP", "TCP", "UDP"' });
    }
  });
  if (spec.type === 'ExternalName' && (typeof spec.externalName !== 'string' || spec.externalName === '')) {
    errors.push({ type: 'Required', field: 'spec.externalName', detail: '' });
  }
  if (isObject(spec.selector)) {
    for (const [k, v] of Object.entries(spec.selector)) {
      for (const detail of labelKeyErrors(k)) errors.push({ type: 'Invalid', field: 'spec.selector', value: k, detail });
      if (typeof v === 'string') for (const detail of labelValueErrors(v)) errors.push({ type: 'Invalid', field: 'spec.selector', value: v, detail });
    }
  }
  if (old) {
    const oldSpec = obj(old.spec);
    if (oldSpec.type !== 'ExternalName' && spec.type !== 'ExternalName' && oldSpec.clusterIP !== spec.clusterIP) {
      errors.push({ type: 'Invalid', field: 'spec.clusterIPs[0]', value: spec.clusterIPs, detail: 'may not change once set' });
    }
  }
  return errors;
}

export function validateClaim(pvc: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = obj(pvc.spec);
  const errors: FieldError[] = [];
  const modes = Array.isArray(spec.accessModes) ? spec.accessModes : [];
  if (modes.length === 0) errors.push({ type: 'Required', field: 'spec.accessModes', detail: 'at least 1 access mode is required' });
  const supported = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
  for (const m of modes) {
    if (!supported.includes(m as string))
      errors.push({ type: 'NotSupported', field: 'spec.accessModes', value: m, detail: supported.map((s) => JSON.stringify(s)).join(', ') });
  }
  const requests = obj(obj(spec.resources).requests);
  if (requests.storage === undefined) errors.push({ type: 'Required', field: 'spec.resources[storage]', detail: '' });
  if (old) {
    // Immutable after creation except binding (volumeName set once) and, for a claim that is Bound,
    // its storage request (ValidatePersistentVolumeClaimUpdate: a Pending claim cannot be resized).
    const bound = obj(old.status).phase === 'Bound';
    const comparable = (s: Obj, other: Obj): Obj => {
      const requests: Obj = {};
      for (const [k, v] of Object.entries(obj(obj(s.resources).requests))) {
        if (!(bound && k === 'storage')) requests[k] = Number.isNaN(quantityBytes(v)) ? v : quantityBytes(v);
      }
      const c = { ...s, resources: { ...obj(s.resources), requests } } as Obj;
      if (!other.volumeName) delete c.volumeName;
      delete c.volumeAttributesClassName;
      return c;
    };
    const oldSpec = obj(old.spec);
    if (!jsonEqual(comparable(spec, oldSpec), comparable(oldSpec, oldSpec))) {
      errors.push({
        type: 'Forbidden',
        field: 'spec',
        detail: 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
      });
    }
  }
  return errors;
}

export function validateEvent(ev: KubeObject): FieldError[] {
  const involved = obj(ev.involvedObject);
  const ns = involved.namespace;
  if (typeof ns === 'string' && ns !== '' && ns !== ev.metadata?.namespace) {
    return [{ type: 'Invalid', field: 'involvedObject.namespace', value: ns, detail: 'does not match event.namespace' }];
  }
  return [];
}

/**
 * Selector required, non-empty, and matching the template's labels (ValidateDeploymentSpec and
 * friends); `restartPolicies` null skips the pod spec, as StatefulSet validation does (its templates
 * mount volumes that only its volumeClaimTemplates define).
 */
function validateSelectorAndTemplate(spec: Obj, restartPolicies: readonly string[] | undefined | null, requireTemplate = true): FieldError[] {
  const errors: FieldError[] = [];
  const selector = asLabelSelector(spec.selector);
  if (!selector) errors.push({ type: 'Required', field: 'spec.selector', detail: '' });
  else if (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0) {
    errors.push({ type: 'Invalid', field: 'spec.selector', value: selector, detail: 'empty selector is invalid for deployment' });
  }
  const template = obj(spec.template);
  if (!requireTemplate && !isObject(spec.template)) return errors;
  const labels = obj(obj(template.metadata).labels) as Record<string, string>;
  if (selector && !matchesLabelSelector(selector, labels)) {
    errors.push({ type: 'Invalid', field: 'spec.template.metadata.labels', value: labels, detail: '`selector` does not match template `labels`' });
  }
  if (restartPolicies !== null) errors.push(...validatePodSpec(template.spec, 'spec.template.spec', restartPolicies));
  return errors;
}

function replicasErrors(spec: Obj): FieldError[] {
  const r = spec.replicas;
  if (r !== undefined && (typeof r !== 'number' || !Number.isInteger(r) || r < 0)) {
    return [{ type: 'Invalid', field: 'spec.replicas', value: r, detail: 'must be greater than or equal to 0' }];
  }
  return [];
}

function immutable(spec: Obj, oldSpec: Obj, field: string): FieldError[] {
  if (jsonEqual(spec[field], oldSpec[field])) return [];
  return [{ type: 'Invalid', field: `spec.${field}`, value: spec[field], detail: 'field is immutable' }];
}

export function validateDeployment(d: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = obj(d.spec);
  const errors = [...replicasErrors(spec), ...validateSelectorAndTemplate(spec, ['Always'])];
  const strategy = obj(spec.strategy);
  if (strategy.type === 'Recreate' && strategy.rollingUpdate !== undefined) {
    errors.push({ type: 'Forbidden', field: 'spec.strategy.rollingUpdate', detail: "may not be specified when strategy `type` is 'Recreate'" });
  }
  if (old) errors.push(...immutable(spec, obj(old.spec), 'selector'));
  return errors;
}

export function validateReplicaSet(rs: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = obj(rs.spec);
  const errors = [...replicasErrors(spec), ...validateSelectorAndTemplate(spec, ['Always'])];
  if (old) errors.push(...immutable(spec, obj(old.spec), 'selector'));
  return errors;
}

const STS_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

export function validateStatefulSet(sts: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = obj(sts.spec);
  // ValidatePodTemplateSpecForStatefulSet checks labels only: the pod spec is not validated.
  const errors = [...replicasErrors(spec), ...validateSelectorAndTemplate(spec, null)];
  const restart = obj(obj(spec.template).spec).restartPolicy;
  if (restart !== undefined && restart !== 'Always') {
    errors.push({ type: 'NotSupported', field: 'spec.template.spec.restartPolicy', value: restart, detail: 'supported values: "Always"' });
  }
  const policy = spec.podManagementPolicy;
  if (policy !== 'OrderedReady' && policy !== 'Parallel') {
    errors.push({ type: 'NotSupported', field: 'spec.podManagementPolicy', value: policy, detail: 'supported values: "OrderedReady", "Parallel"' });
  }
  if (old) {
    const strip = (s: Obj): Obj => Object.fromEntries(Object.entries(s).filter(([k]) => !STS_MUTABLE.includes(k)));
    if (!jsonEqual(strip(spec), strip(obj(old.spec)))) {
      errors.push({
        type: 'Forbidden',
        field: 'spec',
        detail:
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      });
    }
  }
  return errors;
}

export function validateDaemonSet(ds: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = obj(ds.spec);
  const errors = validateSelectorAndTemplate(spec, ['Always']);
  if (old) errors.push(...immutable(spec, obj(old.spec), 'selector'));
  return errors;
}

export function validateJob(job: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = obj(job.spec);
  const errors = validateSelectorAndTemplate(spec, ['OnFailure', 'Never']);
  const template = obj(obj(spec.template).spec);
  if (template.restartPolicy === undefined || template.restartPolicy === 'Always') {
    errors.push({
      type: 'NotSupported',
      field: 'spec.template.spec.restartPolicy',
      value: template.restartPolicy ?? 'Always',
      detail: 'supported values: "OnFailure", "Never"',
    });
  }
  for (const f of ['parallelism', 'completions', 'backoffLimit', 'activeDeadlineSeconds']) {
    const v = spec[f];
    if (v !== undefined && v !== null && (typeof v !== 'number' || v < 0))
      errors.push({ type: 'Invalid', field: `spec.${f}`, value: v, detail: 'must be greater than or equal to 0' });
  }
  if (old) {
    const oldSpec = obj(old.spec);
    errors.push(...immutable(spec, oldSpec, 'selector'));
    errors.push(...immutable(spec, oldSpec, 'completions'));
    if (!jsonEqual(spec.template, oldSpec.template) && spec.suspend !== true) {
      errors.push({ type: 'Invalid', field: 'spec.template', value: spec.template, detail: 'field is immutable' });
    }
  }
  // Remove duplicates from the two restartPolicy checks.
  return errors.filter((e, i) => errors.findIndex((x) => x.field === e.field && x.detail === e.detail) === i);
}

export function validatePdb(pdb: KubeObject): FieldError[] {
  const spec = obj(pdb.spec);
  if (spec.minAvailable !== undefined && spec.minAvailable !== null && spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    return [{ type: 'Invalid', field: 'spec', value: spec, detail: 'minAvailable and maxUnavailable cannot be both set' }];
  }
  return [];
}

export function validateRoleBinding(rb: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const ref = obj(rb.roleRef);
  if (typeof ref.name !== 'string' || ref.name === '') errors.push({ type: 'Required', field: 'roleRef.name', detail: '' });
  if (ref.kind !== 'Role' && ref.kind !== 'ClusterRole')
    errors.push({ type: 'NotSupported', field: 'roleRef.kind', value: ref.kind ?? '', detail: 'supported values: "Role", "ClusterRole"' });
  if (old && !jsonEqual(rb.roleRef, old.roleRef)) errors.push({ type: 'Invalid', field: 'roleRef', value: rb.roleRef, detail: 'cannot change roleRef' });
  return errors;
}
