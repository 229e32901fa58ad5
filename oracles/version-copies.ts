/**
 * Values copied from a resourceVersion. A controller that writes an object's resourceVersion into
 * a label or annotation of another object (zookeeper-operator's `owner-rv`: its custom resource's
 * version whenever it writes the StatefulSet, and through a shared map on the Services made in the
 * same reconcile) records how many writes came before, not what the cluster is: one more write in a
 * test run (a retried conflict, a reconcile more after a fault) gives another value, and a child
 * made in another reconcile gets it or not. The end-state oracle compares such a field as "a
 * resourceVersion of the same object", not by value; the explore oracles use the same test
 * (`copiesVersion`) with the custom resource they know to be the source.
 *
 * A field is such a copy when, in every reference run, its value is a resourceVersion that one and
 * the same named object had in that run (each run's cluster changes record every version of every
 * object, the end state its last; an object with a generated name has another key in each run, so
 * it is never the source); the custom resource is the usual one. Requiring the same object in
 * every reference run, and in the test run a version of that object again, is what keeps numbers
 * that merely look like versions compared: on the embedded cluster, whose versions count from 1, a
 * label "3" for three replicas is the version of Namespace/kube-public (made third) in every run,
 * but a test run's "4" is still compared, for kube-public never had version 4. Only labels and
 * annotations are read (of the object or of a template in it): short numeric values in data fields
 * (ports, sizes, counts) would meet early objects' versions too often for "any string field" to be
 * safe, and copies seen so far are labels.
 */
import type { KubeObject, ObjectKey } from '../src/model/object-key.js';
import { isObject } from '../src/model/object-key.js';
import { ABSENT, type RunArtifacts } from '../src/model/results.js';
import { formatPath, type FieldPath } from '../src/model/field-path.js';
import type { TraceEvent } from '../src/model/trace.js';

/** Whether `v` is one of `versions` (a resourceVersion is a string; numbers are never copies). */
export const copiesVersion = (v: unknown, versions: ReadonlySet<string>): boolean => typeof v === 'string' && versions.has(v);

/** The resourceVersions an object had in a trace. */
export function resourceVersionsOf(events: readonly TraceEvent[], key: ObjectKey): Set<string> {
  const versions = new Set<string>();
  for (const e of events) if (e.type === 'cluster-change' && e.key === key) versions.add(e.resourceVersion);
  return versions;
}

/** Every object's resourceVersions in one run, both ways round. */
export class RunVersions {
  private readonly byObject = new Map<ObjectKey, Set<string>>();
  private readonly byVersion = new Map<string, Set<ObjectKey>>();

  constructor(run: Pick<RunArtifacts, 'endState' | 'clusterChanges'>) {
    for (const c of run.clusterChanges) this.add(c.key, c.resourceVersion);
    for (const [key, obj] of Object.entries(run.endState)) {
      const rv = obj.metadata?.resourceVersion;
      if (typeof rv === 'string') this.add(key, rv);
    }
  }

  of(key: ObjectKey): ReadonlySet<string> {
    return this.byObject.get(key) ?? new Set();
  }

  /** The objects that had `version` (one, where versions are the store's revisions). */
  objectsAt(version: string): ReadonlySet<ObjectKey> {
    return this.byVersion.get(version) ?? new Set();
  }

  private add(key: ObjectKey, rv: string): void {
    if (!this.byObject.has(key)) this.byObject.set(key, new Set());
    this.byObject.get(key)!.add(rv);
    if (!this.byVersion.has(rv)) this.byVersion.set(rv, new Set());
    this.byVersion.get(rv)!.add(key);
  }
}

/** `metadata.labels[k]` or `metadata.annotations[k]`, of the object or of a template in it. */
export function isLabelOrAnnotation(path: FieldPath): boolean {
  const n = path.length;
  return n >= 3 && path[n - 3] === 'metadata' && (path[n - 2] === 'labels' || path[n - 2] === 'annotations') && typeof path[n - 1] === 'string';
}

/**
 * The labels and annotations that copy a resourceVersion, learned from the reference runs, and the
 * judgement of a test run's values of them.
 */
export class VersionCopies {
  private readonly refVersions: RunVersions[];
  private readonly testVersions: RunVersions;
  /**
   * Per object's own label or annotation (formatted path), the objects whose versions it copies in
   * every reference run: for a field that a test run adds to an object which had it in no reference
   * run (a child made in another reconcile), judged by what it copies on the objects that have it.
   */
  private readonly sourcesByPath = new Map<string, Set<ObjectKey>>();

  constructor(
    references: ReadonlyArray<Pick<RunArtifacts, 'endState' | 'clusterChanges'>>,
    refNamed: ReadonlyArray<ReadonlyMap<ObjectKey, KubeObject>>,
    test: Pick<RunArtifacts, 'endState' | 'clusterChanges'>,
  ) {
    this.refVersions = references.map((r) => new RunVersions(r));
    this.testVersions = new RunVersions(test);
    const keys = new Set(refNamed.flatMap((named) => [...named.keys()]));
    for (const key of keys) {
      const objects = refNamed.map((named) => named.get(key));
      for (const path of ownLabelsAndAnnotations(objects)) {
        const sources = this.sharedSources(objects.map((o) => valueAt(o, path)));
        if (sources.size === 0) continue;
        const at = formatPath(path);
        if (!this.sourcesByPath.has(at)) this.sourcesByPath.set(at, new Set());
        for (const s of sources) this.sourcesByPath.get(at)!.add(s);
      }
    }
  }

  /**
   * Whether the values of `path` (one per reference run, ABSENT where missing, then the test run's)
   * differ only as copies of one object's resourceVersion: every present value is, in its run, a
   * version of that object. Where the field is missing on one side only, the copy went to the
   * object in one run's reconcile and not in the other's; it is not a difference either.
   */
  explains(path: FieldPath, refs: readonly unknown[], test: unknown): boolean {
    if (!isLabelOrAnnotation(path)) return false;
    const inRefs = refs.some((v) => v !== ABSENT);
    const sources = inRefs ? this.sharedSources(refs) : (this.sourcesByPath.get(formatPath(path)) ?? new Set<ObjectKey>());
    if (test === ABSENT) return sources.size > 0;
    return [...sources].some((s) => copiesVersion(test, this.testVersions.of(s)));
  }

  /** The objects of which each present value is a version in its reference run (none when a value is missing or no version). */
  private sharedSources(values: readonly unknown[]): Set<ObjectKey> {
    if (values.some((v) => v === undefined || v === ABSENT || typeof v !== 'string')) return new Set();
    let shared: Set<ObjectKey> | undefined;
    values.forEach((v, i) => {
      const at = this.refVersions[i]!.objectsAt(v as string);
      shared = shared === undefined ? new Set(at) : new Set([...shared].filter((k) => at.has(k)));
    });
    return shared ?? new Set();
  }
}

/** The paths of the labels and annotations in the objects' own metadata (one object per reference run). */
function ownLabelsAndAnnotations(objects: ReadonlyArray<KubeObject | undefined>): FieldPath[] {
  const paths = new Map<string, FieldPath>();
  for (const o of objects)
    for (const field of ['labels', 'annotations'] as const) {
      const map = o?.metadata?.[field];
      if (!isObject(map)) continue;
      for (const k of Object.keys(map)) paths.set(`${field}\u0000${k}`, ['metadata', field, k]);
    }
  return [...paths.values()];
}

function valueAt(obj: KubeObject | undefined, path: FieldPath): unknown {
  let v: unknown = obj;
  for (const seg of path) {
    if (!isObject(v) || typeof seg !== 'string' || !Object.hasOwn(v, seg)) return ABSENT;
    v = v[seg];
  }
  return v;
}
