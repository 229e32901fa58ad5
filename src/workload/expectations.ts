/**
 * The `assert` and `error` workload steps: wait, on watches (no polling), until every expected object
 * is matched by a live one (assert) or none is (error), or the step's timeout passes. An expected
 * object with a name is looked up by that name; one without is matched by any object of its kind in
 * its namespace whose labels include its labels (KUTTL's and chainsaw's rule). Objects without a
 * namespace are looked for in `default`, the namespace an `apply` puts them in.
 */
import { describeObject, type ExpectedObjects } from '../config/config.js';
import { InformerFactory, type Informer } from '../kube/informer.js';
import type { KubeClient } from '../kube/client.js';
import { formatKey, type KubeObject, type ObjectKey } from '../model/object-key.js';
import { partialMismatch } from './partial-match.js';

/** What the trace records of a finished assert or error step (see WorkloadStepEvent). */
export interface ExpectationOutcome {
  /** Times the condition was evaluated; only when one named object decides it (see namedObjectKeys). */
  polls?: number;
  metAt?: string;
}

interface Watched {
  expected: KubeObject;
  /** Absent: the cluster serves no such kind (no such object can exist). */
  informer: Informer | undefined;
  namespace: string | undefined;
}

/**
 * The keys of the named objects among `objects`, for the trace's `keys`; an object without a namespace
 * is in `default` when its kind is namespaced (where an apply puts it). For a wait, the planner reads
 * the first key and `metAt` as "this object's change met it", so only one named object says more.
 */
export async function namedObjectKeys(client: KubeClient, objects: readonly KubeObject[]): Promise<ObjectKey[]> {
  const keys: ObjectKey[] = [];
  for (const obj of objects) {
    const name = obj.metadata?.name;
    if (!name || !obj.kind) continue;
    const info = await client.resources.byKind(obj.kind, obj.apiVersion);
    keys.push(formatKey(obj.kind, info?.namespaced === false ? undefined : (obj.metadata?.namespace ?? 'default'), name));
  }
  return keys;
}

export async function waitForExpectation(
  client: KubeClient,
  e: ExpectedObjects,
  mode: 'assert' | 'error',
  cancelled?: () => boolean,
): Promise<ExpectationOutcome> {
  const factory = new InformerFactory(client);
  try {
    const watched: Watched[] = [];
    for (const expected of e.objects) {
      const informer = await factory.forKind(expected.kind!, expected.apiVersion);
      if (!informer && mode === 'assert') throw new Error(`the cluster serves no kind ${expected.kind} in ${expected.apiVersion}`);
      const namespace = informer?.info.namespaced === false ? undefined : (expected.metadata?.namespace ?? 'default');
      watched.push({ expected, informer, namespace });
    }
    const decisive = watched.length === 1 && watched[0]!.expected.metadata?.name !== undefined;
    let polls = 0;
    const evaluate = (): { held: boolean; why: string; metAt?: string } => {
      polls++;
      const reasons: string[] = [];
      let metAt: string | undefined;
      for (const w of watched) {
        const verdict = judge(w);
        if (mode === 'assert' && !verdict.match) reasons.push(`${describeObject(w.expected)}: ${verdict.why}`);
        if (mode === 'error' && verdict.match) reasons.push(`${describeObject(w.expected)}: ${verdict.why}`);
        metAt = verdict.resourceVersion;
      }
      return { held: reasons.length === 0, why: reasons.join('; '), ...(metAt !== undefined ? { metAt } : {}) };
    };
    const outcome = (r: { metAt?: string }): ExpectationOutcome => (decisive ? { polls, ...(r.metAt !== undefined ? { metAt: r.metAt } : {}) } : {});

    let last = evaluate();
    if (last.held) return outcome(last);
    return await new Promise<ExpectationOutcome>((resolve, reject) => {
      const finish = (fn: () => void): void => {
        clearTimeout(timer);
        unsubscribe();
        fn();
      };
      const unsubscribe = factory.onAnyChange(() => {
        if (cancelled?.()) return finish(() => reject(new Error('cancelled')));
        last = evaluate();
        if (last.held) finish(() => resolve(outcome(last)));
      });
      const timer = setTimeout(() => {
        const what = mode === 'assert' ? 'to match' : 'to stop matching';
        finish(() =>
          reject(new Error(`timed out after ${e.timeoutSeconds}s waiting for ${e.file ? e.file.split('/').at(-1) : 'the objects'} ${what}: ${last.why}`)),
        );
      }, e.timeoutSeconds * 1000);
    });
  } finally {
    await factory.stop();
  }
}

/**
 * Does a live object match `w.expected`? `why` says why not (assert) or which object matches (error);
 * `resourceVersion` is that of the named object that decides it (absent when it does not exist).
 */
function judge(w: Watched): { match: boolean; why: string; resourceVersion?: string } {
  const name = w.expected.metadata?.name;
  if (!w.informer) return { match: false, why: 'no such kind' };
  if (name !== undefined) {
    const live = w.informer.get(w.namespace, name);
    if (!live) return { match: false, why: 'it does not exist' };
    const why = partialMismatch(w.expected, live);
    const resourceVersion = live.metadata?.resourceVersion;
    return { match: why === undefined, why: why ?? 'it exists and matches', ...(resourceVersion ? { resourceVersion } : {}) };
  }
  const labels = w.expected.metadata?.labels ?? {};
  const candidates = w.informer.list(w.namespace).filter((o) => Object.entries(labels).every(([k, v]) => o.metadata?.labels?.[k] === v));
  if (candidates.length === 0) return { match: false, why: 'no object of that kind exists' };
  let closest = '';
  for (const live of candidates) {
    const why = partialMismatch(w.expected, live);
    if (why === undefined) return { match: true, why: `${live.metadata?.name} matches` };
    closest ||= `${live.metadata?.name}: ${why}`;
  }
  return { match: false, why: `none of ${candidates.length} matches (${closest})` };
}
