/**
 * The older API versions 2020-21 operators call, as conversions to and from the form objects are
 * stored in (always the newest version here): apiextensions.k8s.io/v1beta1 CustomResourceDefinitions
 * (apiextensions-apiserver pkg/apis/apiextensions/v1beta1 defaults.go and v1/conversion.go, through
 * the internal version), policy/v1beta1 PodDisruptionBudgets (pkg/apis/policy/v1beta1/conversion.go,
 * whose empty selector selects no pod), and the admissionregistration.k8s.io v1/v1beta1 webhook
 * configurations (same fields, different defaults). Which release serves which version is
 * kube-version.ts's business.
 */
import { jsonEqual } from '../../model/json-value.js';
import { isObject, type KubeObject } from '../../model/object-key.js';
import { invalid, type FieldError } from '../api-error.js';
import type { Conversion, ResourceDefinition } from '../registry.js';
import { builtinKind } from './define.js';
import { OBJECT_META_LIST_RULES } from './list-rules.js';

type Obj = Record<string, unknown>;

function asObject(value: unknown): Obj | undefined {
  return isObject(value) ? value : undefined;
}

/** apimachinery's Semantic.DeepEqual as far as JSON goes: absent, null, empty list and empty map are equal. */
function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
  if (empty(a) && empty(b)) return true;
  return jsonEqual(a ?? null, b ?? null);
}

/** Copies `obj` keeping only defined values, in the given key order (Go's field order) then the rest. */
function ordered(obj: Obj, order: readonly string[]): Obj {
  const out: Obj = {};
  for (const key of order) if (obj[key] !== undefined) out[key] = obj[key];
  for (const [key, value] of Object.entries(obj)) if (!(key in out) && value !== undefined) out[key] = value;
  return out;
}

// ---- apiextensions.k8s.io/v1beta1 CustomResourceDefinition ----

const V1BETA1_SPEC_ORDER = [
  'group',
  'version',
  'names',
  'scope',
  'validation',
  'subresources',
  'versions',
  'additionalPrinterColumns',
  'conversion',
  'preserveUnknownFields',
];
const V1_SPEC_ORDER = ['group', 'names', 'scope', 'versions', 'conversion', 'preserveUnknownFields'];
const VERSION_ORDER = [
  'name',
  'served',
  'storage',
  'deprecated',
  'deprecationWarning',
  'schema',
  'subresources',
  'additionalPrinterColumns',
  'selectableFields',
];

/** A printer column with its JSON path under `to` (`JSONPath` in v1beta1, `jsonPath` in v1). */
function renameColumnPath(columns: unknown, from: 'JSONPath' | 'jsonPath', to: 'JSONPath' | 'jsonPath'): unknown {
  if (!Array.isArray(columns)) return columns;
  return columns.map((c) => {
    if (!isObject(c)) return c;
    const { [from]: path, ...rest } = c;
    return ordered({ ...rest, [to]: path }, ['name', 'type', 'format', 'description', 'priority', to]);
  });
}

/** SetDefaults_ServiceReference: a webhook service reference defaults to port 443. */
function defaultServicePort(clientConfig: unknown): void {
  const service = asObject(asObject(clientConfig)?.service);
  if (service && (service.port === undefined || service.port === null)) service.port = 443;
}

/** v1beta1 SetDefaults_CustomResourceDefinitionSpec, applied to a request body before conversion. */
function defaultV1beta1CrdSpec(spec: Obj): void {
  if (spec.scope === undefined || spec.scope === '') spec.scope = 'Namespaced';
  const names = asObject(spec.names);
  if (names && typeof names.kind === 'string') {
    if (names.singular === undefined || names.singular === '') names.singular = names.kind.toLowerCase();
    if ((names.listKind === undefined || names.listKind === '') && names.kind !== '') names.listKind = `${names.kind}List`;
  }
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0 && typeof spec.version === 'string' && spec.version !== '') {
    spec.versions = [{ name: spec.version, served: true, storage: true }];
  }
  if ((spec.version === undefined || spec.version === '') && Array.isArray(spec.versions) && spec.versions.length > 0) {
    const first = asObject(spec.versions[0]);
    if (first && typeof first.name === 'string') spec.version = first.name;
  }
  if (spec.conversion === undefined || spec.conversion === null) spec.conversion = { strategy: 'None' };
  const conversion = asObject(spec.conversion);
  if (conversion?.strategy === 'Webhook') {
    const reviews = conversion.conversionReviewVersions;
    if (!Array.isArray(reviews) || reviews.length === 0) conversion.conversionReviewVersions = ['v1beta1'];
  }
  if (conversion) defaultServicePort(conversion.webhookClientConfig);
  if (spec.preserveUnknownFields === undefined || spec.preserveUnknownFields === null) spec.preserveUnknownFields = true;
}

const hasPerVersion = (versions: Obj[], field: string): boolean =>
  versions.some((v) => v[field] !== undefined && v[field] !== null && !(Array.isArray(v[field]) && (v[field] as unknown[]).length === 0));
const allIdentical = (versions: Obj[], field: string): boolean =>
  versions.length > 1 &&
  versions.every((v) => v[field] !== undefined && v[field] !== null) &&
  versions.every((v) => semanticEqual(v[field], versions[0]![field]));

/**
 * The checks of validateCustomResourceDefinitionSpec that only a v1beta1 body can fail (the fields
 * v1 no longer has): they must run before conversion, which drops those fields.
 */
function v1beta1OnlyErrors(spec: Obj): FieldError[] {
  const errors: FieldError[] = [];
  const versions = (Array.isArray(spec.versions) ? spec.versions : []).filter(isObject);
  const present = (v: unknown): boolean => v !== undefined && v !== null;
  if (present(spec.validation) && hasPerVersion(versions, 'schema')) {
    errors.push({ type: 'Forbidden', field: 'spec.validation', detail: 'top-level and per-version schemas are mutually exclusive' });
  }
  if (present(spec.subresources) && hasPerVersion(versions, 'subresources')) {
    errors.push({ type: 'Forbidden', field: 'spec.subresources', detail: 'top-level and per-version subresources are mutually exclusive' });
  }
  if (Array.isArray(spec.additionalPrinterColumns) && spec.additionalPrinterColumns.length > 0 && hasPerVersion(versions, 'additionalPrinterColumns')) {
    errors.push({
      type: 'Forbidden',
      field: 'spec.additionalPrinterColumns',
      detail: 'top-level and per-version additionalPrinterColumns are mutually exclusive',
    });
  }
  if (allIdentical(versions, 'schema')) {
    errors.push({
      type: 'Invalid',
      field: 'spec.versions',
      value: versions,
      detail: 'per-version schemas may not all be set to identical values (top-level validation should be used instead)',
    });
  }
  if (allIdentical(versions, 'subresources')) {
    errors.push({
      type: 'Invalid',
      field: 'spec.versions',
      value: versions,
      detail: 'per-version subresources may not all be set to identical values (top-level subresources should be used instead)',
    });
  }
  if (allIdentical(versions, 'additionalPrinterColumns')) {
    errors.push({
      type: 'Invalid',
      field: 'spec.versions',
      value: versions,
      detail: 'per-version additionalPrinterColumns may not all be set to identical values (top-level additionalPrinterColumns should be used instead)',
    });
  }
  if (typeof spec.version === 'string' && spec.version !== '' && versions.length > 0 && versions[0]!.name !== spec.version) {
    errors.push({ type: 'Invalid', field: 'spec.version', value: spec.version, detail: 'must match the first version in spec.versions' });
  }
  return errors;
}

/** v1beta1 -> internal -> v1 (Convert_apiextensions_CustomResourceDefinitionSpec_To_v1_...). */
function crdSpecToV1(spec: Obj): Obj {
  const { version: _version, validation, subresources, additionalPrinterColumns, conversion, preserveUnknownFields, versions: rawVersions, ...rest } = spec;
  const versions = (Array.isArray(rawVersions) ? rawVersions : []).map((raw) => {
    if (!isObject(raw)) return raw;
    const v: Obj = { ...raw };
    if (v.additionalPrinterColumns !== undefined) v.additionalPrinterColumns = renameColumnPath(v.additionalPrinterColumns, 'JSONPath', 'jsonPath');
    // The top-level fields apply to every version; validation made sure no version has its own.
    if (subresources !== undefined && subresources !== null) v.subresources = subresources;
    if (validation !== undefined && validation !== null) v.schema = validation;
    if (additionalPrinterColumns !== undefined && additionalPrinterColumns !== null)
      v.additionalPrinterColumns = renameColumnPath(additionalPrinterColumns, 'JSONPath', 'jsonPath');
    return ordered(v, VERSION_ORDER);
  });
  const out: Obj = { ...rest, versions };
  const conv = asObject(conversion);
  if (conv) {
    const { webhookClientConfig, conversionReviewVersions, ...strategy } = conv;
    const converted: Obj = { ...strategy };
    if ((webhookClientConfig !== undefined && webhookClientConfig !== null) || (conversionReviewVersions !== undefined && conversionReviewVersions !== null)) {
      converted.webhook = ordered({ clientConfig: webhookClientConfig ?? undefined, conversionReviewVersions: conversionReviewVersions ?? undefined }, [
        'clientConfig',
        'conversionReviewVersions',
      ]);
    }
    out.conversion = converted;
  }
  // *bool -> bool, omitempty: only true is written.
  if (preserveUnknownFields === true) out.preserveUnknownFields = true;
  return ordered(out, V1_SPEC_ORDER);
}

/** v1 -> internal -> v1beta1 (Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_...). */
function crdSpecToV1beta1(spec: Obj): Obj {
  const { versions: rawVersions, conversion, preserveUnknownFields, ...rest } = spec;
  const versions = (Array.isArray(rawVersions) ? rawVersions : []).filter(isObject).map((v) => ({ ...v }));
  const out: Obj = { ...rest };
  if (versions.length > 0) {
    out.version = versions[0]!.name;
    // Per-version fields identical in every version move to the top level.
    const hoist = (field: string, to: string): void => {
      const first = versions[0]![field];
      if (!versions.every((v) => semanticEqual(v[field], first))) return;
      if (first !== undefined && first !== null) out[to] = first;
      for (const v of versions) delete v[field];
    };
    hoist('subresources', 'subresources');
    hoist('schema', 'validation');
    hoist('additionalPrinterColumns', 'additionalPrinterColumns');
    if (out.additionalPrinterColumns !== undefined) out.additionalPrinterColumns = renameColumnPath(out.additionalPrinterColumns, 'jsonPath', 'JSONPath');
    for (const v of versions) {
      if (v.additionalPrinterColumns !== undefined) v.additionalPrinterColumns = renameColumnPath(v.additionalPrinterColumns, 'jsonPath', 'JSONPath');
    }
  }
  out.versions = versions.map((v) => ordered(v, VERSION_ORDER));
  const conv = asObject(conversion);
  if (conv) {
    const { webhook, ...strategy } = conv;
    const converted: Obj = { ...strategy };
    const hook = asObject(webhook);
    if (hook) {
      if (hook.clientConfig !== undefined && hook.clientConfig !== null) converted.webhookClientConfig = hook.clientConfig;
      if (hook.conversionReviewVersions !== undefined && hook.conversionReviewVersions !== null)
        converted.conversionReviewVersions = hook.conversionReviewVersions;
    }
    out.conversion = converted;
  }
  // bool -> *bool: v1beta1 always shows the value, false included.
  out.preserveUnknownFields = preserveUnknownFields === true;
  return ordered(out, V1BETA1_SPEC_ORDER);
}

export const CRD_V1BETA1_CONVERSION: Conversion = {
  toStorage(obj) {
    const spec = asObject(obj.spec);
    if (!spec) return obj;
    const defaulted: Obj = { ...spec };
    defaultV1beta1CrdSpec(defaulted);
    const errors = v1beta1OnlyErrors(defaulted);
    if (errors.length > 0) throw invalid('CustomResourceDefinition', 'apiextensions.k8s.io', obj.metadata?.name ?? '', errors);
    return { ...obj, spec: crdSpecToV1(defaulted) };
  },
  fromStorage(obj) {
    const spec = asObject(obj.spec);
    return spec ? { ...obj, spec: crdSpecToV1beta1(spec) } : obj;
  },
};

// ---- policy/v1beta1 PodDisruptionBudget ----

/** policy.PDBV1beta1Label: marks the selectors that carry v1beta1's "empty selects nothing" across versions. */
export const PDB_V1BETA1_LABEL = 'pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match';
const NON_V1BETA1_MATCH_NONE = { matchExpressions: [{ key: PDB_V1BETA1_LABEL, operator: 'Exists' }] };
const V1BETA1_MATCH_ALL = { matchExpressions: [{ key: PDB_V1BETA1_LABEL, operator: 'DoesNotExist' }] };

function isEmptySelector(selector: unknown): boolean {
  return isObject(selector) && semanticEqual(selector.matchLabels, undefined) && semanticEqual(selector.matchExpressions, undefined);
}

function withSelector(obj: KubeObject, selector: unknown): KubeObject {
  const spec = asObject(obj.spec) ?? {};
  return { ...obj, spec: { ...spec, selector } };
}

export const PDB_V1BETA1_CONVERSION: Conversion = {
  toStorage(obj) {
    const selector = asObject(obj.spec)?.selector;
    if (selector === undefined || selector === null) return obj;
    if (isEmptySelector(selector)) return withSelector(obj, structuredClone(NON_V1BETA1_MATCH_NONE));
    if (semanticEqual(selector, V1BETA1_MATCH_ALL)) return withSelector(obj, {});
    // StripPDBV1beta1Label: the marker never mixes with a user's own requirements.
    const s = selector as Obj;
    if (Array.isArray(s.matchExpressions)) {
      const kept = s.matchExpressions.filter((e) => !(isObject(e) && e.key === PDB_V1BETA1_LABEL));
      if (kept.length !== s.matchExpressions.length) return withSelector(obj, { ...s, matchExpressions: kept });
    }
    return obj;
  },
  fromStorage(obj) {
    const selector = asObject(obj.spec)?.selector;
    if (selector === undefined || selector === null) return obj;
    if (semanticEqual(selector, NON_V1BETA1_MATCH_NONE)) return withSelector(obj, {});
    if (isEmptySelector(selector)) return withSelector(obj, structuredClone(V1BETA1_MATCH_ALL));
    return obj;
  },
};

// ---- admissionregistration.k8s.io webhook configurations ----

type WebhookVersion = 'v1' | 'v1beta1';

/** SetDefaults_{Validating,Mutating}Webhook and SetDefaults_Rule of each version (defaults.go). */
function defaultWebhooks(obj: KubeObject, version: WebhookVersion, mutating: boolean): KubeObject {
  if (!Array.isArray(obj.webhooks)) return obj;
  const webhooks = obj.webhooks.map((raw) => {
    if (!isObject(raw)) return raw;
    const w: Obj = { ...raw };
    const unset = (f: string): boolean => w[f] === undefined || w[f] === null;
    if (unset('failurePolicy')) w.failurePolicy = version === 'v1' ? 'Fail' : 'Ignore';
    if (unset('matchPolicy')) w.matchPolicy = version === 'v1' ? 'Equivalent' : 'Exact';
    if (unset('namespaceSelector')) w.namespaceSelector = {};
    if (unset('objectSelector')) w.objectSelector = {};
    if (version === 'v1beta1' && unset('sideEffects')) w.sideEffects = 'Unknown';
    if (unset('timeoutSeconds')) w.timeoutSeconds = version === 'v1' ? 10 : 30;
    if (version === 'v1beta1' && (unset('admissionReviewVersions') || (w.admissionReviewVersions as unknown[]).length === 0))
      w.admissionReviewVersions = ['v1beta1'];
    if (mutating && unset('reinvocationPolicy')) w.reinvocationPolicy = 'Never';
    if (Array.isArray(w.rules)) w.rules = w.rules.map((r) => (isObject(r) && (r.scope === undefined || r.scope === null) ? { ...r, scope: '*' } : r));
    const clientConfig = asObject(w.clientConfig);
    if (clientConfig && isObject(clientConfig.service)) w.clientConfig = { ...clientConfig, service: { port: 443, ...clientConfig.service } };
    return w;
  });
  return { ...obj, webhooks };
}

const SIDE_EFFECTS_V1 = ['None', 'NoneOnDryRun'];

/** The checks v1 adds over v1beta1 (validation.go, for a new object written as v1). */
function validateWebhookConfiguration(obj: KubeObject, old: KubeObject | undefined, requestVersion: string | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const webhooks = Array.isArray(obj.webhooks) ? obj.webhooks : [];
  const seen = new Set<string>();
  webhooks.forEach((raw, i) => {
    const w = asObject(raw) ?? {};
    if (typeof w.name !== 'string' || w.name === '') errors.push({ type: 'Required', field: `webhooks[${i}].name`, detail: '' });
    else if (seen.has(w.name)) errors.push({ type: 'Duplicate', field: `webhooks[${i}].name`, value: w.name, detail: '' });
    else seen.add(w.name);
    if (requestVersion !== 'v1' || old) return;
    if (!SIDE_EFFECTS_V1.includes(w.sideEffects as string)) {
      errors.push(
        w.sideEffects === undefined || w.sideEffects === null
          ? { type: 'Required', field: `webhooks[${i}].sideEffects`, detail: 'must specify one of None, NoneOnDryRun' }
          : { type: 'NotSupported', field: `webhooks[${i}].sideEffects`, value: w.sideEffects, detail: 'supported values: "None", "NoneOnDryRun"' },
      );
    }
    if (!Array.isArray(w.admissionReviewVersions) || w.admissionReviewVersions.length === 0) {
      errors.push({ type: 'Required', field: `webhooks[${i}].admissionReviewVersions`, detail: 'must specify one of v1, v1beta1' });
    }
  });
  return errors;
}

function webhookConfigurationDefinition(kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration'): ResourceDefinition {
  const mutating = kind === 'MutatingWebhookConfiguration';
  const defaultsOf = (version: WebhookVersion): Conversion => ({ toStorage: (o) => defaultWebhooks(o, version, mutating), fromStorage: (o) => o });
  return builtinKind({
    group: 'admissionregistration.k8s.io',
    versions: ['v1', 'v1beta1'],
    resource: `${kind.toLowerCase()}s`,
    kind,
    namespaced: false,
    categories: ['api-extensions'],
    versionConversions: { v1: defaultsOf('v1'), v1beta1: defaultsOf('v1beta1') },
    strategy: {
      // Generation starts at 1 and follows changes of `webhooks` (the registry's PrepareForUpdate).
      tracksGeneration: true,
      listRules: { ...OBJECT_META_LIST_RULES, webhooks: { patchMerge: { key: 'name' }, listType: 'map', listMapKeys: ['name'] } },
      validate: validateWebhookConfiguration,
    },
  });
}

export function admissionRegistrationDefinitions(): ResourceDefinition[] {
  return [webhookConfigurationDefinition('MutatingWebhookConfiguration'), webhookConfigurationDefinition('ValidatingWebhookConfiguration')];
}
