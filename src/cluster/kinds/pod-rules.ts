/**
 * The pod-spec rules operators trip when they build pods, StatefulSets and Deployments
 * (pkg/apis/core/validation: ValidateTolerations, validateProbe/validateHandler,
 * ValidateContainerResourceRequirements, ValidateAffinity's selector requirements,
 * ValidatePodSecurityContext/ValidateSecurityContext's user and group ids), with kube-apiserver's
 * field paths and messages. Quantities are compared exactly and printed canonically (Quantity.String()).
 */
import { isObject } from '../../model/object-key.js';
import type { FieldError } from '../api-error.js';

type Obj = Record<string, unknown>;

const objects = (value: unknown): Obj[] => (Array.isArray(value) ? value.filter(isObject) : []);
const obj = (value: unknown): Obj => (isObject(value) ? value : {});

// ---- quantities (k8s.io/apimachinery/pkg/api/resource) ----

/** A parsed quantity: value = mantissa * 10^exp, and the suffix family it was written in. */
export interface Quantity {
  mantissa: bigint;
  exp: number;
  format: 'BinarySI' | 'DecimalSI' | 'DecimalExponent';
}

const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/** resource.ParseQuantity; undefined for a string it refuses. */
export function parseQuantity(text: string): Quantity | undefined {
  const m = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE])?$/.exec(text.trim());
  if (!m) return undefined;
  const [, sign, number, suffix = ''] = m;
  const [whole, frac = ''] = number!.split('.');
  let mantissa = BigInt(`${whole || '0'}${frac}`) * (sign === '-' ? -1n : 1n);
  let exp = -frac.length;
  let format: Quantity['format'] = 'DecimalSI';
  if (suffix in BINARY_SUFFIX) {
    mantissa *= 2n ** BigInt(BINARY_SUFFIX[suffix]!);
    format = 'BinarySI';
  } else if (/^[eE]/.test(suffix)) {
    exp += Number(suffix.slice(1));
    format = 'DecimalExponent';
  } else exp += DECIMAL_SUFFIX[suffix]!;
  // Precision below nano rounds up (away from zero), as the inf.Dec scale -9 limit does.
  if (exp < -9) {
    const div = 10n ** BigInt(-9 - exp);
    const q = mantissa / div;
    mantissa = q * div === mantissa ? q : q + (mantissa < 0n ? -1n : 1n);
    exp = -9;
  }
  return { mantissa, exp, format };
}

function compareQuantities(a: Quantity, b: Quantity): number {
  const exp = Math.min(a.exp, b.exp);
  const x = a.mantissa * 10n ** BigInt(a.exp - exp);
  const y = b.mantissa * 10n ** BigInt(b.exp - exp);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Quantity.String(): the canonical form (largest suffix keeping an integer mantissa). */
export function formatQuantity(q: Quantity): string {
  let { mantissa, exp } = q;
  if (mantissa === 0n) return '0';
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exp++;
  }
  if (q.format === 'BinarySI' && exp >= 0) {
    let value = mantissa * 10n ** BigInt(exp);
    let power = 0;
    while (power < 60 && value % 1024n === 0n && value !== 0n) {
      value /= 1024n;
      power += 10;
    }
    const suffix = Object.entries(BINARY_SUFFIX).find(([, p]) => p === power)?.[0] ?? '';
    if (power > 0 || (value > -1024n && value < 1024n)) return `${value}${suffix}`;
  }
  // Decimal: the exponent rounded down to a multiple of 3 (within n..E).
  let e3 = Math.floor(exp / 3) * 3;
  if (e3 > 18) e3 = 18;
  if (e3 < -9) e3 = -9;
  const digits = mantissa * 10n ** BigInt(exp - e3);
  if (q.format === 'DecimalExponent') return e3 === 0 ? `${digits}` : `${digits}e${e3}`;
  const suffix = Object.entries(DECIMAL_SUFFIX).find(([, p]) => p === e3)?.[0] ?? '';
  return `${digits}${suffix}`;
}

const quantityText = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

// Resources whose request may be below their limit (helper.IsOvercommitAllowed): the native ones.
const OVERCOMMIT = (name: string): boolean => !name.includes('/') || name.startsWith('kubernetes.io/') || name.startsWith('requests.');

function resourceErrors(resources: unknown, field: string): FieldError[] {
  const r = obj(resources);
  const errors: FieldError[] = [];
  const limits = new Map<string, Quantity>();
  for (const [name, raw] of Object.entries(obj(r.limits))) {
    const q = parseQuantity(quantityText(raw) ?? '');
    if (!q) continue;
    limits.set(name, q);
    if (q.mantissa < 0n)
      errors.push({ type: 'Invalid', field: `${field}.limits[${name}]`, value: formatQuantity(q), detail: 'must be greater than or equal to 0' });
  }
  for (const [name, raw] of Object.entries(obj(r.requests))) {
    const q = parseQuantity(quantityText(raw) ?? '');
    if (!q) continue;
    if (q.mantissa < 0n)
      errors.push({ type: 'Invalid', field: `${field}.requests[${name}]`, value: formatQuantity(q), detail: 'must be greater than or equal to 0' });
    const limit = limits.get(name);
    if (!limit) continue;
    const cmp = compareQuantities(q, limit);
    if (cmp !== 0 && !OVERCOMMIT(name))
      errors.push({
        type: 'Invalid',
        field: `${field}.requests`,
        value: formatQuantity(q),
        detail: `must be equal to ${name} limit of ${formatQuantity(limit)}`,
      });
    else if (cmp > 0)
      errors.push({
        type: 'Invalid',
        field: `${field}.requests`,
        value: formatQuantity(q),
        detail: `must be less than or equal to ${name} limit of ${formatQuantity(limit)}`,
      });
  }
  return errors;
}

// ---- probes ----

const HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;
const PROBE_COUNTERS = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'] as const;

function probeErrors(probe: unknown, field: string, kind: 'liveness' | 'readiness' | 'startup'): FieldError[] {
  if (!isObject(probe)) return [];
  const errors: FieldError[] = [];
  let handlers = 0;
  for (const h of HANDLERS) {
    if (probe[h] === undefined || probe[h] === null) continue;
    if (handlers > 0) errors.push({ type: 'Forbidden', field: `${field}.${h}`, detail: 'may not specify more than 1 handler type' });
    else handlers++;
  }
  if (handlers === 0) errors.push({ type: 'Required', field, detail: 'must specify a handler type' });
  for (const f of PROBE_COUNTERS) {
    const v = probe[f];
    if (typeof v === 'number' && v < 0) errors.push({ type: 'Invalid', field: `${field}.${f}`, value: v, detail: 'must be greater than or equal to 0' });
  }
  if (kind !== 'readiness' && typeof probe.successThreshold === 'number' && probe.successThreshold !== 1)
    errors.push({ type: 'Invalid', field: `${field}.successThreshold`, value: probe.successThreshold, detail: 'must be 1' });
  return errors;
}

// ---- security contexts ----

const ID_RANGE = 'must be between 0 and 2147483647, inclusive';

function securityContextErrors(sc: unknown, field: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const f of ['runAsUser', 'runAsGroup', 'fsGroup'] as const) {
    const v = obj(sc)[f];
    if (typeof v === 'number' && (v < 0 || v > 2147483647)) errors.push({ type: 'Invalid', field: `${field}.${f}`, value: v, detail: ID_RANGE });
  }
  return errors;
}

// ---- tolerations ----

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** `%#v` of a core.Toleration, as ValidateTolerations quotes it. */
function tolerationErrors(list: unknown, field: string): FieldError[] {
  const errors: FieldError[] = [];
  objects(list).forEach((t, i) => {
    const at = `${field}[${i}]`;
    const key = typeof t.key === 'string' ? t.key : '';
    const operator = typeof t.operator === 'string' ? t.operator : '';
    const value = typeof t.value === 'string' ? t.value : '';
    if (key === '' && operator !== 'Exists')
      errors.push({
        type: 'Invalid',
        field: `${at}.operator`,
        value: operator,
        detail: 'operator must be Exists when `key` is empty, which means "match all values and all keys"',
      });
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== 'NoExecute')
      errors.push({ type: 'Invalid', field: `${at}.effect`, value: t.effect ?? '', detail: "effect must be 'NoExecute' when `tolerationSeconds` is set" });
    if (operator === 'Exists') {
      if (value !== '') errors.push({ type: 'Invalid', field: `${at}.operator`, value, detail: "value must be empty when `operator` is 'Exists'" });
    } else if (operator !== '' && operator !== 'Equal') {
      errors.push({ type: 'NotSupported', field: `${at}.operator`, value: operator, detail: 'supported values: "Equal", "Exists"' });
    }
    if (typeof t.effect === 'string' && t.effect !== '' && !TAINT_EFFECTS.includes(t.effect))
      errors.push({
        type: 'NotSupported',
        field: `${at}.effect`,
        value: t.effect,
        detail: `supported values: ${TAINT_EFFECTS.map((e) => JSON.stringify(e)).join(', ')}`,
      });
  });
  return errors;
}

// ---- affinity ----

function requirementErrors(req: Obj, field: string, numeric: boolean): FieldError[] {
  const op = req.operator;
  const values = Array.isArray(req.values) ? req.values : [];
  if (op === 'In' || op === 'NotIn')
    return values.length === 0 ? [{ type: 'Required', field: `${field}.values`, detail: "must be specified when `operator` is 'In' or 'NotIn'" }] : [];
  if (op === 'Exists' || op === 'DoesNotExist')
    return values.length > 0
      ? [{ type: 'Forbidden', field: `${field}.values`, detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'" }]
      : [];
  if (numeric && (op === 'Gt' || op === 'Lt'))
    return values.length !== 1
      ? [{ type: 'Required', field: `${field}.values`, detail: "must be specified single value when `operator` is 'Lt' or 'Gt'" }]
      : [];
  return [{ type: 'Invalid', field: `${field}.operator`, value: op ?? '', detail: 'not a valid selector operator' }];
}

function nodeSelectorTermErrors(term: Obj, field: string): FieldError[] {
  return [
    ...objects(term.matchExpressions).flatMap((r, i) => requirementErrors(r, `${field}.matchExpressions[${i}]`, true)),
    ...objects(term.matchFields).flatMap((r, i) => requirementErrors(r, `${field}.matchFields[${i}]`, true)),
  ];
}

function labelSelectorErrors(selector: unknown, field: string): FieldError[] {
  return objects(obj(selector).matchExpressions).flatMap((r, i) => requirementErrors(r, `${field}.matchExpressions[${i}]`, false));
}

function podAffinityTermErrors(term: Obj, field: string): FieldError[] {
  const errors = labelSelectorErrors(term.labelSelector, `${field}.labelSelector`);
  if (typeof term.topologyKey !== 'string' || term.topologyKey === '')
    errors.push({ type: 'Required', field: `${field}.topologyKey`, detail: 'can not be empty' });
  return errors;
}

function weightErrors(w: unknown, field: string): FieldError[] {
  return typeof w === 'number' && (w < 1 || w > 100) ? [{ type: 'Invalid', field, value: w, detail: 'must be in the range 1-100' }] : [];
}

function affinityErrors(affinity: unknown, field: string): FieldError[] {
  const a = obj(affinity);
  const errors: FieldError[] = [];
  const node = obj(a.nodeAffinity);
  const required = node.requiredDuringSchedulingIgnoredDuringExecution;
  if (isObject(required)) {
    const at = `${field}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`;
    const terms = objects(required.nodeSelectorTerms);
    if (terms.length === 0) errors.push({ type: 'Required', field: `${at}.nodeSelectorTerms`, detail: 'must have at least one node selector term' });
    terms.forEach((t, i) => errors.push(...nodeSelectorTermErrors(t, `${at}.nodeSelectorTerms[${i}]`)));
  }
  objects(node.preferredDuringSchedulingIgnoredDuringExecution).forEach((p, i) => {
    const at = `${field}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    errors.push(...weightErrors(p.weight, `${at}.weight`), ...nodeSelectorTermErrors(obj(p.preference), `${at}.preference`));
  });
  for (const kind of ['podAffinity', 'podAntiAffinity'] as const) {
    const pa = obj(a[kind]);
    objects(pa.requiredDuringSchedulingIgnoredDuringExecution).forEach((t, i) =>
      errors.push(...podAffinityTermErrors(t, `${field}.${kind}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`)),
    );
    objects(pa.preferredDuringSchedulingIgnoredDuringExecution).forEach((p, i) => {
      const at = `${field}.${kind}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      errors.push(...weightErrors(p.weight, `${at}.weight`), ...podAffinityTermErrors(obj(p.podAffinityTerm), `${at}.podAffinityTerm`));
    });
  }
  return errors;
}

/** The rules above for one pod spec at `field` (`spec`, `spec.template.spec`). */
export function podSpecRuleErrors(spec: Obj, field: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const list of ['containers', 'initContainers'] as const) {
    objects(spec[list]).forEach((c, i) => {
      const at = `${field}.${list}[${i}]`;
      errors.push(
        ...probeErrors(c.livenessProbe, `${at}.livenessProbe`, 'liveness'),
        ...probeErrors(c.readinessProbe, `${at}.readinessProbe`, 'readiness'),
        ...probeErrors(c.startupProbe, `${at}.startupProbe`, 'startup'),
        ...resourceErrors(c.resources, `${at}.resources`),
        ...securityContextErrors(c.securityContext, `${at}.securityContext`),
      );
    });
  }
  errors.push(...securityContextErrors(spec.securityContext, `${field}.securityContext`));
  errors.push(...affinityErrors(spec.affinity, `${field}.affinity`));
  errors.push(...tolerationErrors(spec.tolerations, `${field}.tolerations`));
  return errors;
}
