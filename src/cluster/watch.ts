/**
 * Watch streams: `GET ...?watch=true`, answered as a chunked `application/json` stream of
 * `{"type":...,"object":...}` lines, with the semantics of kube-apiserver's watch cache:
 * - resourceVersion unset or "0": synthetic ADDED events for the current state, then changes;
 * - resourceVersion "X": every change after X from the retained history, or an in-stream 410 Expired
 *   ERROR event (then the stream ends) when X is older than the history;
 * - sendInitialEvents=true (WatchList): ADDED events, then a BOOKMARK annotated
 *   `k8s.io/initial-events-end: "true"`, then changes;
 * - selectors are applied to both states of a change: an object that stops matching is DELETED,
 *   one that starts matching is ADDED;
 * - BOOKMARKs every `bookmarkIntervalMs` when allowWatchBookmarks=true; timeoutSeconds ends the stream.
 */
import type { ServerResponse } from 'node:http';
import { groupVersion } from '../model/api-path.js';
import type { KubeObject } from '../model/object-key.js';
import { expired, resourceVersionTooLarge } from './api-error.js';
import { present, selects, type Scope, type Selection } from './operations.js';
import { storageKey } from './registry.js';
import { toTable, type TableRequest } from './table.js';
import type { ObjectStore, StoreChange } from './store.js';

export interface WatchRequest {
  scope: Scope;
  /** Watch of a single object (a named watch URL). */
  name?: string | undefined;
  selection: Selection;
  /** Parsed resourceVersion; undefined when unset. */
  resourceVersion?: number | undefined;
  allowBookmarks: boolean;
  timeoutSeconds?: number | undefined;
  sendInitialEvents?: boolean | undefined;
  /** Events carry Tables instead of objects (kubectl get -w asks for them, see table.ts). */
  table?: TableRequest | undefined;
}

/** What a new stream sends first: the current state as ADDED events, or retained changes. */
type Backlog = { kind: 'snapshot'; objects: KubeObject[] } | { kind: 'changes'; changes: StoreChange[] };

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * Writes the lines of many streams in batches: a stream's lines wait in memory until the end of the
 * event loop turn (setImmediate), then go out as one chunk. Node writes every `res.write` of a tick
 * with its own writev system call, so delivering each change to 100 watchers at once cost 100 system
 * calls per write request and held the write rate to a fifth of the unwatched one; batched, the
 * changes of every request served in one turn share one system call per watcher.
 */
class LineBatcher {
  private readonly waiting = new Set<WatchStream>();
  private scheduled: NodeJS.Immediate | undefined;

  /** `stream` has lines to flush at the end of this turn. */
  add(stream: WatchStream): void {
    this.waiting.add(stream);
    this.scheduled ??= setImmediate(() => this.flushAll());
  }

  private flushAll(): void {
    this.scheduled = undefined;
    const streams = [...this.waiting];
    this.waiting.clear();
    for (const stream of streams) stream.flush();
  }
}

class WatchStream {
  private unsubscribe: (() => void) | undefined;
  private timers: NodeJS.Timeout[] = [];
  private closed = false;
  /** Lines written since the last flush, in order. */
  private pending = '';

  constructor(
    readonly request: WatchRequest,
    private readonly res: ServerResponse,
    private readonly batcher: LineBatcher,
    private readonly onClose: (stream: WatchStream) => void,
  ) {
    res.on('close', () => this.close());
    res.on('error', () => this.close());
  }

  get resource(): string {
    return storageKey(this.request.scope.def);
  }

  start(store: ObjectStore, backlog: Backlog, initialEventsEnd: boolean, bookmarkIntervalMs: number): void {
    if (backlog.kind === 'snapshot') for (const obj of backlog.objects) this.send('ADDED', obj);
    else for (const change of backlog.changes) this.deliver(change);
    if (initialEventsEnd) this.sendBookmark(store.resourceVersion, true);
    this.unsubscribe = store.subscribe((change) => this.deliver(change));
    const { allowBookmarks, timeoutSeconds } = this.request;
    if (allowBookmarks && bookmarkIntervalMs > 0) {
      const timer = setInterval(() => this.sendBookmark(store.resourceVersion, false), bookmarkIntervalMs);
      timer.unref();
      this.timers.push(timer);
    }
    if (timeoutSeconds !== undefined && timeoutSeconds > 0) {
      const timer = setTimeout(() => this.close(), timeoutSeconds * 1000);
      timer.unref();
      this.timers.push(timer);
    }
  }

  /** Ends the stream cleanly (the client sees the response end). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    this.flush();
    if (!this.res.writableEnded) this.res.end();
    this.onClose(this);
  }

  sendError(status: unknown): void {
    this.write({ type: 'ERROR', object: status });
  }

  private deliver(change: StoreChange): void {
    const { scope, name, selection } = this.request;
    if (change.resource !== this.resource) return;
    if (scope.def.namespaced && scope.namespace !== undefined && change.namespace !== scope.namespace) return;
    if (name !== undefined && change.name !== name) return;
    const now = change.type !== 'DELETED' && selects(selection, change.object);
    const before = change.previous !== undefined && selects(selection, change.previous);
    switch (change.type) {
      case 'ADDED':
        if (now) this.send('ADDED', change.object);
        return;
      case 'DELETED':
        if (before) this.send('DELETED', change.object);
        return;
      case 'MODIFIED':
        if (now && before) this.send('MODIFIED', change.object);
        else if (now) this.send('ADDED', change.object);
        else if (before) {
          // Stopped matching: clients must forget it, so it is DELETED with the change's resourceVersion.
          const last = { ...change.previous!, metadata: { ...change.previous!.metadata, resourceVersion: String(change.resourceVersion) } };
          this.send('DELETED', last);
        }
        return;
    }
  }

  private send(type: EventType, obj: KubeObject): void {
    const { def, version } = this.request.scope;
    const table = this.request.table;
    if (table) {
      this.write({ type, object: toTable(def, version, present(def, version, obj), table) });
      return;
    }
    this.writeLine(encodeEvent(type, obj, `${def.group}/${def.kind}`, () => JSON.stringify({ type, object: present(def, version, obj) }) + '\n', version));
  }

  private sendBookmark(rv: number, initialEventsEnd: boolean): void {
    const { def, version } = this.request.scope;
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END]: 'true' };
    this.write({ type: 'BOOKMARK', object: { kind: def.kind, apiVersion: groupVersion(def.group, version), metadata } });
  }

  private write(event: { type: EventType; object: unknown }): void {
    this.writeLine(JSON.stringify(event) + '\n');
  }

  private writeLine(line: string): void {
    if (this.closed || this.res.writableEnded || this.res.destroyed) return;
    if (this.pending === '') this.batcher.add(this);
    this.pending += line;
  }

  /** Sends the lines written since the last flush as one chunk. */
  flush(): void {
    const lines = this.pending;
    this.pending = '';
    if (lines === '' || this.res.writableEnded || this.res.destroyed) return;
    this.res.write(lines);
  }
}

/**
 * The encoded lines of the object state delivered last: a change reaches every stream synchronously,
 * so with many watchers the state is serialized once per event type, API group and version.
 */
let lastEncoded: { obj: KubeObject; lines: Map<string, string> } | undefined;

function encodeEvent(type: EventType, obj: KubeObject, kind: string, encode: () => string, version: string): string {
  if (lastEncoded?.obj !== obj) lastEncoded = { obj, lines: new Map() };
  const key = `${type} ${kind} ${version}`;
  let line = lastEncoded.lines.get(key);
  if (line === undefined) lastEncoded.lines.set(key, (line = encode()));
  return line;
}

export interface WatchHubOptions {
  bookmarkIntervalMs: number;
}

export class WatchHub {
  private readonly streams = new Set<WatchStream>();
  private readonly batcher = new LineBatcher();

  constructor(
    private readonly store: ObjectStore,
    private readonly options: WatchHubOptions,
  ) {}

  get openStreams(): number {
    return this.streams.size;
  }

  /**
   * Serves one watch. Errors that real servers report before the stream starts (a resourceVersion
   * from the future) are thrown as ApiError; Expired is reported in-stream, as kube-apiserver does.
   */
  open(request: WatchRequest, res: ServerResponse): void {
    const rv = request.resourceVersion;
    const current = this.store.resourceVersion;
    if (rv !== undefined && rv > current) throw resourceVersionTooLarge(rv, current);
    let backlog: Backlog = { kind: 'changes', changes: [] };
    let expiredStatus: unknown;
    const snapshot = request.sendInitialEvents === true || ((rv === undefined || rv === 0) && request.sendInitialEvents !== false);
    if (snapshot) {
      const { def, namespace } = request.scope;
      const objects = this.store
        .list(storageKey(def), def.namespaced ? namespace : undefined)
        .filter((o) => (request.name === undefined || o.metadata?.name === request.name) && selects(request.selection, o));
      backlog = { kind: 'snapshot', objects };
    } else if (rv !== undefined && rv !== 0) {
      const changes = this.store.changesAfter(rv);
      if (changes === undefined) expiredStatus = expired(`too old resource version: ${rv} (${this.store.compactedResourceVersion})`).toStatus();
      else backlog = { kind: 'changes', changes };
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const stream = new WatchStream(request, res, this.batcher, (s) => this.streams.delete(s));
    this.streams.add(stream);
    if (expiredStatus !== undefined) {
      stream.sendError(expiredStatus);
      stream.close();
      return;
    }
    // The initial-events-end bookmark is sent only to a watch that allows bookmarks (the cacher's isListWatchRequest).
    stream.start(this.store, backlog, request.sendInitialEvents === true && request.allowBookmarks, this.options.bookmarkIntervalMs);
  }

  /** Ends every watch on a resource whose kind is no longer served. */
  closeResource(resource: string): void {
    for (const s of [...this.streams]) if (s.resource === resource) s.close();
  }

  closeAll(): void {
    for (const s of [...this.streams]) s.close();
  }
}
