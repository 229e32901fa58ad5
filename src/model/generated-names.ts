/**
 * Objects created with `metadata.generateName` get a different random suffix in every run, so a plan
 * cannot name them by their key. Triggers name them `Kind/namespace/<prefix>*#<n>` instead: the n-th
 * object (1-based) created with that kind, namespace and prefix, in the order the cluster reported the
 * creations. `*` never occurs in a real object name, so a folded key cannot collide with a real one.
 *
 * The planner folds keys while it reads a reference trace; whatever matches triggers at test time
 * must fold the keys it sees the same way: feed every creation, in order, to `observeCreate`, and look
 * keys up with `fold`.
 */
import { formatKey, parseKey, type KubeObject, type ObjectKey } from './object-key.js';

/** The API server's generated-name alphabet (no vowels, no 0/1/3: no words, no look-alikes) and suffix length. */
export const GENERATED_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
export const GENERATED_SUFFIX_LENGTH = 5;

const GENERATED_SUFFIX = new RegExp(`^[${GENERATED_NAME_ALPHABET}]{${GENERATED_SUFFIX_LENGTH}}$`);

/**
 * Did the API server make this name from `generateName` (names.SimpleNameGenerator: the prefix cut to
 * 58 characters, then 5 random characters of its alphabet)? A client may send both a name and a
 * generateName, and then the name is its own: kube-controller-manager names StatefulSet pods
 * `<set>-<ordinal>` with generateName `<set>-`, and those names are the same in every run.
 */
export function isGeneratedName(name: string | undefined, generateName: string | undefined): boolean {
  if (!name || !generateName) return false;
  const base = generateName.slice(0, 58);
  return name.length === base.length + GENERATED_SUFFIX_LENGTH && name.startsWith(base) && GENERATED_SUFFIX.test(name.slice(base.length));
}

export class GeneratedNameFolder {
  private readonly folded = new Map<ObjectKey, ObjectKey>();
  private readonly unfolded = new Map<ObjectKey, ObjectKey>();
  private readonly counts = new Map<string, number>();

  /** Records the creation of `key`; returns the key triggers use for it from now on. */
  observeCreate(key: ObjectKey, obj: KubeObject | undefined): ObjectKey {
    const known = this.folded.get(key);
    if (known) return known;
    const prefix = obj?.metadata?.generateName;
    const name = obj?.metadata?.name;
    const parts = parseKey(key);
    if (!parts || !prefix || !isGeneratedName(name, prefix)) return key;
    const family = formatKey(parts.kind, parts.namespace, prefix);
    const n = (this.counts.get(family) ?? 0) + 1;
    this.counts.set(family, n);
    const foldedKey = formatKey(parts.kind, parts.namespace, `${prefix}*#${n}`);
    this.folded.set(key, foldedKey);
    this.unfolded.set(foldedKey, key);
    return foldedKey;
  }

  /**
   * The folded key the next object created in `family` (`Kind/namespace/<prefix>`, as formatKey
   * writes it) will get: what a create request with that generateName is about to make.
   */
  nextInFamily(family: ObjectKey): ObjectKey {
    return `${family}*#${(this.counts.get(family) ?? 0) + 1}`;
  }

  /** The folded key of an object seen created with a generated name, else the key itself. */
  fold(key: ObjectKey): ObjectKey {
    return this.folded.get(key) ?? key;
  }

  /**
   * The real key a plan's key names in this run: a folded key's object as this run created it
   * (undefined while no such object has been created), any other key itself.
   */
  resolve(key: ObjectKey): ObjectKey | undefined {
    return isFoldedKey(key) ? this.unfolded.get(key) : key;
  }
}

/** Is this a folded key (`.../<prefix>*#<n>`)? */
export function isFoldedKey(key: ObjectKey): boolean {
  return /\*#\d+$/.test(key);
}

/**
 * A pod-template-hash, as kube-controller-manager's Deployment controller writes it into the names of
 * its ReplicaSets: rand.SafeEncodeString of a decimal uint32, so 1-10 characters of the generated-name
 * alphabet; 6-10 here (a hash below 100000 is 1 in 40000), so that short names ending in consonants
 * (`web-rs`) are not taken for one.
 */
const TEMPLATE_HASH = `[${GENERATED_NAME_ALPHABET}]{6,10}`;
const REPLICASET_OF_DEPLOYMENT = new RegExp(`^(ReplicaSet/[^/]*/.+)-${TEMPLATE_HASH}$`);
const POD_OF_REPLICASET = new RegExp(`^(Pod/[^/]*/.+)-${TEMPLATE_HASH}-(?:[${GENERATED_NAME_ALPHABET}]{${GENERATED_SUFFIX_LENGTH}}|\\*)$`);

/**
 * An object key with a Deployment's pod-template-hash folded: ReplicaSet `<deployment>-<hash>` ->
 * `<deployment>-*`, and its pods `<deployment>-<hash>-<5 characters>` (or the oracles' `-*`) ->
 * `<deployment>-*-*`. The hash is a digest of the pod template, which may hold per-run values (an
 * annotation with a TLS Secret's digest, as the Percona operators write), so one bug names another
 * ReplicaSet in every run. For comparing what runs showed (finding signatures, their confirmation,
 * the pruning check) and for the oracles' object identities (oracles/object-identity.ts).
 */
export function foldTemplateHash(key: ObjectKey): ObjectKey {
  return key.replace(POD_OF_REPLICASET, '$1-*-*').replace(REPLICASET_OF_DEPLOYMENT, '$1-*');
}
