/**
 * Field management: `metadata.managedFields` and server-side apply, after sigs.k8s.io/structured-merge-diff
 * and k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager.
 *
 * A field set is a set of paths; a path is a list of elements in FieldsV1 notation: `f:name` (a field),
 * `k:{"name":"web"}` (an item of an associative list, by its keys), `v:"x"` (an item of a set list).
 * Which lists are associative or sets comes from the kind's `ListRules`; all other lists are atomic
 * (owned as a whole). Every write records who changed what: non-apply writes add the fields they changed
 * to the writer's `Update` entry and take them from everyone else; an apply owns exactly the fields of its
 * configuration, conflicts with other owners of fields whose value it changes (409, unless force), and
 * removes fields it applied before and no longer applies when nobody else owns them.
 */
import { cloneJson, jsonEqual } from '../model/json-value.js';
import { isObject, type KubeObject } from '../model/object-key.js';
import { ApiError, badRequest } from './api-error.js';
import type { ListRule, ListRules } from './registry.js';

type Obj = Record<string, unknown>;

/** One managedFields entry, as on the wire. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Obj;
  subresource?: string;
}

/** Paths joined with SEP; elements are FieldsV1 keys (JSON escapes control characters, so SEP never occurs in one). */
const SEP = '\u0001';

export type FieldSet = Set<string>;

/** Fields the field manager never tracks (fieldmanager's StripMeta). */
const STRIPPED_TOP = new Set(['apiVersion', 'kind']);
const STRIPPED_META = new Set([
  'name',
  'namespace',
  'creationTimestamp',
  'selfLink',
  'uid',
  'clusterName',
  'generation',
  'managedFields',
  'resourceVersion',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
]);

function ruleFor(rules: ListRules, rulePath: string): ListRule | undefined {
  return rules[rulePath];
}

function childRulePath(rulePath: string, field: string): string {
  return rulePath ? `${rulePath}.${field}` : field;
}

/** The key element (`k:{...}`) of an associative list item, keys sorted by name; undefined if a key is missing. */
function keyElement(item: unknown, rule: ListRule): string | undefined {
  if (!isObject(item)) return undefined;
  const key: Obj = {};
  for (const k of [...(rule.listMapKeys ?? [])].sort()) {
    const v = item[k] ?? rule.listMapKeyDefaults?.[k];
    if (v === undefined || v === null) return undefined;
    key[k] = v;
  }
  return `k:${JSON.stringify(key)}`;
}

function valueElement(item: unknown): string {
  return `v:${JSON.stringify(item)}`;
}

/**
 * Leaves (and list items) of an object with their values: the basis of field sets and of comparisons.
 * `marker` values stand for list items and empty maps, which are members without a comparable value.
 */
function collect(value: unknown, rules: ListRules, out: Map<string, string>, prefix: string[], rulePath: string): void {
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0 && prefix.length > 0) {
      out.set(prefix.join(SEP), '{}');
      return;
    }
    for (const key of keys) {
      const v = value[key];
      if (v === undefined) continue;
      if (prefix.length === 0 && STRIPPED_TOP.has(key)) continue;
      if (prefix.length === 1 && prefix[0] === 'f:metadata' && STRIPPED_META.has(key)) continue;
      collect(v, rules, out, [...prefix, `f:${key}`], childRulePath(rulePath, key));
    }
    return;
  }
  if (Array.isArray(value)) {
    const rule = ruleFor(rules, rulePath);
    if (rule?.listType === 'map') {
      const seen = new Set<string>();
      for (const item of value) {
        const el = keyElement(item, rule);
        if (el === undefined || seen.has(el)) {
          // An item without its keys (or a duplicate) cannot be tracked: own the list atomically.
          out.set(prefix.join(SEP), JSON.stringify(value));
          return;
        }
        seen.add(el);
      }
      for (const item of value) {
        const itemPath = [...prefix, keyElement(item, rule)!];
        out.set(itemPath.join(SEP), '');
        const { ...fields } = item as Obj;
        collect(fields, rules, out, itemPath, `${rulePath}[]`);
        // An item's own map is not a leaf even when it only holds its keys.
        if (out.get(itemPath.join(SEP)) === '{}') out.set(itemPath.join(SEP), '');
      }
      return;
    }
    if (rule?.listType === 'set' && value.every((v) => !isObject(v) && !Array.isArray(v))) {
      for (const item of value) out.set([...prefix, valueElement(item)].join(SEP), '');
      return;
    }
    out.set(prefix.join(SEP), JSON.stringify(value));
    return;
  }
  out.set(prefix.join(SEP), JSON.stringify(value));
}

/** Every tracked path of `obj` with a comparable rendering of its value. */
export function leavesOf(obj: unknown, rules: ListRules): Map<string, string> {
  const out = new Map<string, string>();
  collect(obj, rules, out, [], '');
  return out;
}

export function fieldSetOf(obj: unknown, rules: ListRules): FieldSet {
  return new Set(leavesOf(obj, rules).keys());
}

/** Paths added or changed from `before` to `after`, and paths removed. */
export function diffFields(before: unknown, after: unknown, rules: ListRules): { changed: FieldSet; removed: FieldSet } {
  const a = leavesOf(before, rules);
  const b = leavesOf(after, rules);
  const changed: FieldSet = new Set();
  const removed: FieldSet = new Set();
  for (const [path, v] of b) if (a.get(path) !== v) changed.add(path);
  for (const path of a.keys()) if (!b.has(path)) removed.add(path);
  return { changed, removed };
}

/** The paths of `set` a write may own (the others are reset by the strategy: status, or everything but status). */
export function ownablePaths(set: FieldSet, keep: (path: string) => boolean): FieldSet {
  return new Set([...set].filter(keep));
}

// ---- FieldsV1 encoding ----

interface Node {
  member: boolean;
  children: Map<string, Node>;
}

export function encodeFieldsV1(set: FieldSet): Obj {
  const root: Node = { member: false, children: new Map() };
  for (const path of set) {
    let node = root;
    for (const el of path.split(SEP)) {
      let next = node.children.get(el);
      if (!next) node.children.set(el, (next = { member: false, children: new Map() }));
      node = next;
    }
    node.member = true;
  }
  const render = (node: Node): Obj => {
    const out: Obj = {};
    if (node.member && node.children.size > 0) out['.'] = {};
    for (const key of [...node.children.keys()].sort()) out[key] = render(node.children.get(key)!);
    return out;
  };
  return render(root);
}

export function decodeFieldsV1(fields: unknown): FieldSet {
  const set: FieldSet = new Set();
  const walk = (node: unknown, prefix: string[]): void => {
    if (!isObject(node)) return;
    const keys = Object.keys(node);
    if (prefix.length > 0 && (keys.length === 0 || keys.includes('.'))) set.add(prefix.join(SEP));
    for (const key of keys) if (key !== '.') walk(node[key], [...prefix, key]);
  };
  walk(fields, []);
  return set;
}

/** `.spec.containers[name="web"].image`: a path as structured-merge-diff prints it in conflicts. */
export function formatPath(path: string): string {
  return path
    .split(SEP)
    .map((el) => {
      const body = el.slice(2);
      if (el.startsWith('f:')) return `.${body}`;
      if (el.startsWith('k:')) {
        const key = JSON.parse(body) as Obj;
        return `[${Object.entries(key)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(',')}]`;
      }
      if (el.startsWith('v:')) return `[=${body}]`;
      return `[${body}]`;
    })
    .join('');
}

// ---- managed fields bookkeeping ----

export interface ManagerId {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
}

function sameManager(e: ManagerId, id: ManagerId): boolean {
  // Update entries are kept per manager, operation and subresource (the apiVersion moves with the latest write).
  return e.manager === id.manager && e.operation === id.operation && (e.subresource ?? '') === (id.subresource ?? '');
}

interface Managed {
  id: ManagerId;
  set: FieldSet;
  time?: string;
  original?: ManagedFieldsEntry | undefined;
}

/** Decodes stored managedFields; invalid entries are dropped. */
function readManaged(value: unknown): Managed[] {
  if (!Array.isArray(value)) return [];
  const out: Managed[] = [];
  for (const raw of value) {
    if (!isObject(raw) || typeof raw.manager !== 'string' || (raw.operation !== 'Apply' && raw.operation !== 'Update')) continue;
    const id: ManagerId = { manager: raw.manager, operation: raw.operation, apiVersion: typeof raw.apiVersion === 'string' ? raw.apiVersion : '' };
    if (typeof raw.subresource === 'string' && raw.subresource !== '') id.subresource = raw.subresource;
    out.push({
      id,
      set: decodeFieldsV1(raw.fieldsV1),
      ...(typeof raw.time === 'string' ? { time: raw.time } : {}),
      original: raw as unknown as ManagedFieldsEntry,
    });
  }
  return out;
}

function writeManaged(entries: Managed[], now: string): ManagedFieldsEntry[] | undefined {
  const kept = entries.filter((e) => e.set.size > 0);
  if (kept.length === 0) return undefined;
  const out = kept.map((e): ManagedFieldsEntry => {
    const fieldsV1 = encodeFieldsV1(e.set);
    if (e.original && jsonEqual(e.original.fieldsV1, fieldsV1) && e.original.apiVersion === e.id.apiVersion) return e.original;
    const entry: ManagedFieldsEntry = {
      manager: e.id.manager,
      operation: e.id.operation,
      apiVersion: e.id.apiVersion,
      time: now,
      fieldsType: 'FieldsV1',
      fieldsV1,
    };
    if (e.id.subresource) entry.subresource = e.id.subresource;
    return entry;
  });
  return out.sort(
    (a, b) =>
      (a.operation === b.operation ? 0 : a.operation === 'Apply' ? -1 : 1) || (a.time ?? '').localeCompare(b.time ?? '') || a.manager.localeCompare(b.manager),
  );
}

/**
 * What the client sent in metadata.managedFields decides the starting point: absent or `[]` keeps the
 * stored entries, `[{}]` (one empty entry) clears them, a valid list replaces them.
 */
function startingEntries(incoming: unknown, stored: unknown): Managed[] {
  if (!Array.isArray(incoming) || incoming.length === 0) return readManaged(stored);
  if (incoming.length === 1 && isObject(incoming[0]) && Object.keys(incoming[0]).length === 0) return [];
  for (const e of incoming) {
    if (!isObject(e) || typeof e.manager !== 'string' || (e.operation !== 'Apply' && e.operation !== 'Update')) {
      throw badRequest('error decoding managed fields: invalid managedFields entry');
    }
  }
  return readManaged(incoming);
}

/** Where a write happened: main resource or a subresource; the fields a write there may not own. */
export interface WriteSite {
  subresource?: 'status';
  /** Whether the kind has a status subresource (then main writes never own status). */
  statusSubresource: boolean;
}

function resetFilter(site: WriteSite): (path: string) => boolean {
  if (site.subresource === 'status') return (p) => p === 'f:status' || p.startsWith(`f:status${SEP}`) || p.startsWith(`f:metadata${SEP}`);
  if (site.statusSubresource) return (p) => p !== 'f:status' && !p.startsWith(`f:status${SEP}`);
  return () => true;
}

/**
 * Records a non-apply write (create, update, patch) by `id`: the fields that changed become the
 * manager's; removed fields leave every set. Returns the managedFields for the new object.
 */
export function recordUpdate(
  before: KubeObject | undefined,
  after: KubeObject,
  incomingManagedFields: unknown,
  id: ManagerId,
  site: WriteSite,
  rules: ListRules,
  now: string,
): ManagedFieldsEntry[] | undefined {
  const entries = startingEntries(incomingManagedFields, before?.metadata?.managedFields);
  const { changed, removed } = diffFields(stripManaged(before), stripManaged(after), rules);
  const owned = ownablePaths(changed, resetFilter(site));
  for (const e of entries) {
    for (const p of removed) e.set.delete(p);
    if (!sameManager(e.id, id)) for (const p of owned) e.set.delete(p);
  }
  if (owned.size > 0) {
    let mine = entries.find((e) => sameManager(e.id, id));
    if (!mine) entries.push((mine = { id, set: new Set() }));
    mine.id = { ...mine.id, apiVersion: id.apiVersion };
    for (const p of owned) mine.set.add(p);
    mine.original = undefined;
  }
  return writeManaged(entries, now);
}

function stripManaged(obj: KubeObject | undefined): KubeObject | undefined {
  if (!obj) return undefined;
  const { managedFields: _m, ...meta } = obj.metadata ?? {};
  return { ...obj, metadata: meta };
}

// ---- server-side apply ----

export interface ApplyResult {
  object: KubeObject;
  managedFields: ManagedFieldsEntry[] | undefined;
}

export interface Conflict {
  manager: ManagerId;
  path: string;
}

/** The 409 of a conflicting apply, worded as k8s.io/apiserver's fieldmanager NewConflictError. */
export function conflictError(conflicts: Conflict[]): ApiError {
  const describe = (id: ManagerId): string => {
    let s = JSON.stringify(id.manager);
    if (id.subresource) s += ` with subresource ${JSON.stringify(id.subresource)}`;
    if (id.operation === 'Update') s += ` using ${id.apiVersion}`;
    return s;
  };
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describe(c.manager)}`, field: formatPath(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${describe(conflicts[0]!.manager)}: ${formatPath(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const key = describe(c.manager);
      byManager.set(key, [...(byManager.get(key) ?? []), formatPath(c.path)]);
    }
    const lines: string[] = [];
    for (const key of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${key}:`);
      for (const p of byManager.get(key)!) lines.push(`- ${p}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}

/** Structured merge of an applied configuration into the live object. */
export function mergeApplied(live: unknown, applied: unknown, rules: ListRules, rulePath = ''): unknown {
  if (isObject(applied)) {
    const base: Obj = isObject(live) ? { ...live } : {};
    for (const [k, v] of Object.entries(applied)) {
      if (v === null) delete base[k];
      else base[k] = mergeApplied(base[k], v, rules, childRulePath(rulePath, k));
    }
    return base;
  }
  if (Array.isArray(applied)) {
    const rule = ruleFor(rules, rulePath);
    const current = Array.isArray(live) ? live : [];
    if (rule?.listType === 'map') {
      const out = [...current];
      for (const item of applied) {
        const el = keyElement(item, rule);
        const idx = el === undefined ? -1 : out.findIndex((x) => keyElement(x, rule) === el);
        if (idx >= 0) out[idx] = mergeApplied(out[idx], item, rules, `${rulePath}[]`);
        else out.push(cloneJson(item));
      }
      return out;
    }
    if (rule?.listType === 'set') {
      const out = [...current];
      for (const item of applied) if (!out.some((x) => jsonEqual(x, item))) out.push(cloneJson(item));
      return out;
    }
    return cloneJson(applied);
  }
  return cloneJson(applied);
}

/** Removes one tracked path from an object (a field, an associative-list item, a set value). */
function removePath(obj: unknown, elements: string[], rules: ListRules, rulePath = ''): void {
  if (elements.length === 0) return;
  const [head, ...rest] = elements as [string, ...string[]];
  if (head.startsWith('f:')) {
    if (!isObject(obj)) return;
    const field = head.slice(2);
    if (rest.length === 0) {
      delete obj[field];
      return;
    }
    const child = obj[field];
    removePath(child, rest, rules, childRulePath(rulePath, field));
    if (isObject(child) && Object.keys(child).length === 0) delete obj[field];
    if (Array.isArray(child) && child.length === 0) delete obj[field];
    return;
  }
  if (!Array.isArray(obj)) return;
  const rule = ruleFor(rules, rulePath);
  let idx = -1;
  if (head.startsWith('k:') && rule) idx = obj.findIndex((x) => keyElement(x, rule) === head);
  else if (head.startsWith('v:')) idx = obj.findIndex((x) => valueElement(x) === head);
  if (idx < 0) return;
  if (rest.length === 0) obj.splice(idx, 1);
  else removePath(obj[idx], rest, rules, `${rulePath}[]`);
}

/**
 * Applies `applied` (already decoded, with apiVersion/kind checked) by `id` onto `live` (undefined when
 * the object does not exist yet). Throws the 409 conflict error unless `force`.
 */
export function apply(
  live: KubeObject | undefined,
  applied: KubeObject,
  id: ManagerId,
  force: boolean,
  site: WriteSite,
  rules: ListRules,
  now: string,
): ApplyResult {
  const keep = resetFilter(site);
  const entries = readManaged(live?.metadata?.managedFields);
  const appliedSet = ownablePaths(fieldSetOf(applied, rules), keep);
  let merged = (live ? mergeApplied(stripManaged(live), applied, rules) : cloneJson(applied)) as KubeObject;

  // Conflicts: fields this apply changes that someone else owns.
  const { changed } = diffFields(stripManaged(live) ?? {}, merged, rules);
  const conflicts: Conflict[] = [];
  for (const e of entries) {
    if (sameManager(e.id, id)) continue;
    for (const p of e.set) if (changed.has(p) && appliedSet.has(p)) conflicts.push({ manager: e.id, path: p });
  }
  if (conflicts.length > 0 && !force) throw conflictError(conflicts);
  for (const c of conflicts) entries.find((e) => e.id === c.manager)?.set.delete(c.path);

  // Fields this manager applied before and no longer applies are removed unless someone else owns them.
  let mine = entries.find((e) => sameManager(e.id, id));
  if (mine) {
    for (const p of mine.set) {
      if (appliedSet.has(p)) continue;
      if (entries.some((e) => e !== mine && e.set.has(p))) continue;
      const elements = p.split(SEP);
      if (elements[0] === 'f:metadata' && elements.length === 1) continue;
      merged = cloneJson(merged);
      removePath(merged, elements, rules);
    }
  } else {
    entries.push((mine = { id, set: new Set() }));
  }
  mine.id = { ...mine.id, apiVersion: id.apiVersion };
  mine.set = appliedSet;
  mine.original = undefined;
  // Fields an apply removed leave everyone's sets.
  const { removed } = diffFields(stripManaged(live) ?? {}, merged, rules);
  for (const e of entries) if (e !== mine) for (const p of removed) e.set.delete(p);
  if (merged.metadata) delete merged.metadata.managedFields;
  return { object: merged, managedFields: writeManaged(entries, now) };
}
