/**
 * What `learn` checks of kperturb.yaml against the embedded cluster before it starts a run: inputs
 * that would otherwise fail the first reference run, or make it wait out a timeout, with a message
 * that names neither the file nor the setting to change.
 * - A manifest whose kind the emulated release does not serve (an `apiextensions.k8s.io/v1beta1`
 *   CRD on the default 1.32): the file, the path and the release to emulate.
 * - A wait on a field a built-in kind does not have (`spec.replicas` of a ConfigMap): it could never
 *   hold, and the run would wait its whole timeout (60 s by default) to say `spec.replicas is undefined`.
 */
import { relative } from 'node:path';
import type { ControllerUnderTest, Workload } from '../config/config.js';
import { readDocuments } from '../config/import/suite.js';
import { UserInputError } from '../model/errors.js';
import { DEFAULT_KUBERNETES_VERSION, parseKubernetesVersion, servingReleases } from '../model/kube-version.js';
import { builtinDefinitions } from '../cluster/builtins.js';
import { builtinUnknownFields } from '../cluster/openapi-builtin.js';
import { isKeyedSegment, parseFieldPath, type FieldPath } from '../model/field-path.js';

/** Throws for the first object of `setup` or of an `apply` step that the emulated release does not serve. */
export function checkServedKinds(config: ControllerUnderTest, workloads: readonly Workload[]): void {
  const release = config.cluster?.kubernetesVersion ?? DEFAULT_KUBERNETES_VERSION;
  const minor = parseKubernetesVersion(release)?.minor;
  if (minor === undefined) return;
  const check = (objects: unknown[], at: string, source: string) =>
    objects.forEach((obj, i) => {
      const { kind, apiVersion } = (obj ?? {}) as { kind?: unknown; apiVersion?: unknown };
      if (typeof kind !== 'string' || typeof apiVersion !== 'string') return;
      const span = servingReleases(kind, apiVersion);
      if (!span || (minor >= span.from && minor <= span.to)) return;
      const serving = span.from === span.to ? `Kubernetes 1.${span.from} serves` : `Kubernetes 1.${span.from}-1.${span.to} serve`;
      const what = objects.length > 1 ? `${source} (document ${i + 1})` : source;
      throw new UserInputError(
        config.file,
        at,
        `a kind the embedded cluster's Kubernetes ${release} serves: ${what} is a ${kind} of ${apiVersion}, which ${serving}; set cluster.kubernetesVersion: "1.${span.to}" (or move the manifest to a version ${release} serves)`,
        'KP_E_CONFIG',
      );
    });
  config.setup.forEach((file, i) => check(readDocuments(file), `setup[${i}]`, relative(config.dir, file)));
  for (const w of workloads)
    w.steps.forEach((step, i) => {
      if (!('apply' in step)) return;
      const at = `workloads.${w.name}.steps[${i}].apply`;
      if (typeof step.apply === 'string') check(readDocuments(step.apply), at, relative(config.dir, step.apply));
      else check([step.apply.resource], `${at}.resource`, 'the inline resource');
    });
}

/**
 * Throws for the first `waitFor` on a field that a built-in kind's schema does not declare (a kind no
 * CRD of `setup` or of an `apply` step redefines); maps and opaque objects (labels, a ConfigMap's
 * data) hold any key.
 */
export function checkWaitFields(config: ControllerUnderTest, workloads: readonly Workload[]): void {
  const crdKinds = new Set<string>();
  const manifests = [...config.setup, ...workloads.flatMap((w) => w.steps.flatMap((s) => ('apply' in s && typeof s.apply === 'string' ? [s.apply] : [])))];
  for (const file of manifests)
    for (const doc of readDocuments(file)) {
      const { kind, spec } = (doc ?? {}) as { kind?: unknown; spec?: { names?: { kind?: unknown } } };
      if (kind === 'CustomResourceDefinition' && typeof spec?.names?.kind === 'string') crdKinds.add(spec.names.kind);
    }
  const builtins = builtinDefinitions();
  for (const w of workloads)
    w.steps.forEach((step, i) => {
      if (!('waitFor' in step) || step.waitFor.field === undefined || step.waitFor.field.includes('\\')) return;
      const kind = step.waitFor.key.split('/')[0]!;
      if (crdKinds.has(kind)) return;
      const object = objectWith(parseFieldPath(step.waitFor.field));
      // A kind of several groups (Event) has the field when any of them declares it.
      const missing = builtins.filter((d) => d.kind === kind).map((d) => ({ d, unknown: builtinUnknownFields(d.group, d.versions[0]!, kind, object) }));
      if (missing.length === 0 || missing.some((m) => !m.unknown || m.unknown.length === 0)) return;
      const { d, unknown } = missing[0]!;
      const at = `workloads.${w.name}.steps[${i}].waitFor.${step.waitFor.condition !== undefined ? 'condition' : 'field'}`;
      const apiVersion = d.group === '' ? d.versions[0]! : `${d.group}/${d.versions[0]!}`;
      throw new UserInputError(
        config.file,
        at,
        `a field ${kind} has: ${kind} (${apiVersion}) has no field ${unknown![0]!.replace(/\[\d+\]/g, '[]')}, so the wait for ${step.waitFor.field} to equal ${JSON.stringify(step.waitFor.equals)} could only time out`,
        'KP_E_CONFIG',
      );
    });
}

/** The smallest object that has a value at `path` (a keyed item carries its key). */
function objectWith(path: FieldPath): unknown {
  let value: unknown = 'x';
  for (let i = path.length - 1; i >= 0; i--) {
    const seg = path[i]!;
    if (typeof seg === 'number') value = [value];
    else if (isKeyedSegment(seg)) value = [{ ...(typeof value === 'object' && value !== null ? value : {}), [seg.key]: seg.value }];
    else value = { [seg]: value };
  }
  return value;
}
