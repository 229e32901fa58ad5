/**
 * Resource discovery: maps between API resources (`apps/v1 statefulsets`) and kinds (`StatefulSet`),
 * learned from the API server's discovery documents, so that object keys use kinds whatever the
 * request path said. Cached; a miss re-reads discovery once (a CRD may have just been created).
 */
import { groupVersion, splitApiVersion } from '../model/api-path.js';
import { isObject } from '../model/object-key.js';

export interface ResourceInfo {
  group: string;
  version: string;
  /** Plural resource name, e.g. `configmaps`. */
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  subresources: string[];
}

export type FetchJson = (path: string) => Promise<{ status: number; body: unknown }>;

export class ResourceMapper {
  private byGroupVersion = new Map<string, ResourceInfo[]>();
  private fullyLoaded = false;
  private loading: Promise<void> | undefined;

  constructor(private readonly fetchJson: FetchJson) {}

  /** Forget everything (after a CRD change). */
  invalidate(): void {
    this.byGroupVersion.clear();
    this.fullyLoaded = false;
  }

  async byResource(group: string, version: string, resource: string): Promise<ResourceInfo | undefined> {
    const gv = groupVersion(group, version);
    const find = () => this.byGroupVersion.get(gv)?.find((r) => r.resource === resource);
    let found = find();
    if (!found) {
      await this.loadGroupVersion(group, version);
      found = find();
    }
    return found;
  }

  /** Finds a kind, preferring `apiVersion` when given; otherwise the first group serving the kind. */
  async byKind(kind: string, apiVersion?: string): Promise<ResourceInfo | undefined> {
    const find = () => this.findKind(kind, apiVersion);
    let found = find();
    if (!found) {
      if (apiVersion) {
        const { group, version } = splitApiVersion(apiVersion);
        await this.loadGroupVersion(group, version);
      } else {
        await this.loadAll(true);
      }
      found = find();
    }
    return found;
  }

  async all(): Promise<ResourceInfo[]> {
    await this.loadAll(false);
    return [...this.byGroupVersion.values()].flat();
  }

  private findKind(kind: string, apiVersion?: string): ResourceInfo | undefined {
    if (apiVersion) {
      return this.byGroupVersion.get(apiVersion)?.find((r) => r.kind === kind);
    }
    for (const list of this.byGroupVersion.values()) {
      const hit = list.find((r) => r.kind === kind);
      if (hit) return hit;
    }
    return undefined;
  }

  private async loadAll(force: boolean): Promise<void> {
    if (this.fullyLoaded && !force) return;
    if (!this.loading) {
      this.loading = this.readAll().finally(() => (this.loading = undefined));
    }
    await this.loading;
  }

  private async readAll(): Promise<void> {
    const gvs: Array<{ group: string; version: string }> = [];
    const core = await this.fetchJson('/api');
    if (core.status === 200 && isObject(core.body) && Array.isArray(core.body.versions)) {
      for (const v of core.body.versions) if (typeof v === 'string') gvs.push({ group: '', version: v });
    }
    const groups = await this.fetchJson('/apis');
    if (groups.status === 200 && isObject(groups.body) && Array.isArray(groups.body.groups)) {
      for (const g of groups.body.groups) {
        if (!isObject(g) || typeof g.name !== 'string' || !Array.isArray(g.versions)) continue;
        for (const v of g.versions) {
          if (isObject(v) && typeof v.version === 'string') gvs.push({ group: g.name, version: v.version });
        }
      }
    }
    // Discovery order, not answer order: each group's preferred version first, so that whoever takes
    // the first version of a resource (the cluster recorder, the garbage collector) takes the
    // preferred one in every run, as client-go's preferred-resources discovery does.
    await Promise.all(gvs.map((gv) => this.loadGroupVersion(gv.group, gv.version)));
    const ordered = new Map<string, ResourceInfo[]>();
    for (const gv of gvs) {
      const key = groupVersion(gv.group, gv.version);
      const infos = this.byGroupVersion.get(key);
      if (infos) ordered.set(key, infos);
    }
    for (const [key, infos] of this.byGroupVersion) if (!ordered.has(key)) ordered.set(key, infos);
    this.byGroupVersion = ordered;
    this.fullyLoaded = true;
  }

  private async loadGroupVersion(group: string, version: string): Promise<void> {
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    const res = await this.fetchJson(path);
    if (res.status !== 200 || !isObject(res.body) || !Array.isArray(res.body.resources)) {
      this.byGroupVersion.delete(groupVersion(group, version));
      return;
    }
    const infos = new Map<string, ResourceInfo>();
    const subs: Array<[string, string]> = [];
    for (const r of res.body.resources) {
      if (!isObject(r) || typeof r.name !== 'string' || typeof r.kind !== 'string') continue;
      const slash = r.name.indexOf('/');
      if (slash >= 0) {
        subs.push([r.name.slice(0, slash), r.name.slice(slash + 1)]);
        continue;
      }
      infos.set(r.name, {
        group,
        version,
        resource: r.name,
        kind: r.kind,
        namespaced: r.namespaced === true,
        verbs: Array.isArray(r.verbs) ? r.verbs.filter((v): v is string => typeof v === 'string') : [],
        subresources: [],
      });
    }
    for (const [parent, sub] of subs) infos.get(parent)?.subresources.push(sub);
    this.byGroupVersion.set(groupVersion(group, version), [...infos.values()]);
  }
}
