/**
 * A manifest whose kind the embedded cluster's emulated release does not serve (an
 * `apiextensions.k8s.io/v1beta1` CRD on the default 1.32) is refused before `learn` starts a run,
 * naming the file, the path in kperturb.yaml and the release to emulate. Otherwise the first reference
 * run fails with the cluster's answer, which names neither the file nor the setting.
 */
import { relative } from 'node:path';
import type { ControllerUnderTest, Workload } from '../config/config.js';
import { readDocuments } from '../config/import/suite.js';
import { UserInputError } from '../model/errors.js';
import { DEFAULT_KUBERNETES_VERSION, parseKubernetesVersion, servingReleases } from '../model/kube-version.js';

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
