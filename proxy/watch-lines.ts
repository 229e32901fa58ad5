/**
 * Decoding watch event lines, once per line for every stream that receives it. Several watches of
 * one resource (informers of several controllers, or of one controller's several caches) receive the
 * very same line; a proxy's `WatchLines` parses it once and its streams share the object,
 * read-only, in their events and trace records (`shared`: the trace writer serializes it once too).
 * Secrets are never shared: the trace writer redacts their values in place.
 *
 * One `WatchLines` per proxy: what it holds is that proxy's, and a process with several proxies (a
 * campaign's parallel runs) keeps their lines apart.
 */
import { isObject, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import type { SharedTextSlot, WatchEventType } from '../src/model/trace.js';
import { keyOfAnswer } from './classify.js';

const WATCH_EVENT_TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

export interface RelayedWatchEvent {
  /** The exact bytes of the event line, newline included: what the controller receives. */
  raw: Buffer;
  /** Absent when the line is not a watch event the proxy understands (it is still forwarded). */
  type?: WatchEventType;
  object?: KubeObject;
  key?: ObjectKey | undefined;
  resourceVersion?: string | undefined;
  /** Set when `object` is shared with the other streams that received the same line (see SharedTextSlot). */
  shared?: SharedTextSlot | undefined;
  /** The end of the stream (no bytes): the controller's response ends when this is delivered. */
  end?: true;
}

interface DecodedLine {
  type: WatchEventType;
  object: KubeObject;
  /** The object's key, once computed, when the object names its kind (so no stream's fallback decides it). */
  key?: ObjectKey;
  /** For a shared line: where a trace writer keeps the object's text. */
  shared?: SharedTextSlot;
}

/** Where one stream is among the recent lines: the number of the last one it received (0: none). */
export interface LineCursor {
  n: number;
}

/**
 * A shared line decoded (numbered from 1 in the order lines were decoded), with a copy of its bytes
 * and a link to the line that followed it on the stream that decoded it first.
 */
interface RecentLine {
  n: number;
  raw: Buffer;
  decoded: DecodedLine;
  /** The number of the line that came next on the stream that decoded this one first (0: none yet). */
  next: number;
}

/**
 * The last lines decoded, by their text: bounded by count and by their text's total length. Under
 * load the slowest of many watchers of an object fall well behind the fastest (in bench:proxy's 100
 * watchers of one object, beyond the last 64 lines for 7-29% of the events), and each line that left
 * the map is parsed again, once per stream that is that far behind.
 */
const RECENT_LINES = 1024;
const RECENT_CHARS = 1024 * 1024;
const MAX_SHARED_LINE = 64 * 1024;
/** The ring of recent lines (see WatchLines); the copies' total length is bounded too (large objects). */
const RING_SIZE = 256;
const RING_BYTES = 1024 * 1024;
/** A line that is not the linked one is looked for among the newest few. */
const NEWEST_FEW = 8;

/**
 * A proxy's recent watch lines. The watchers of one object get the same lines in the same order, but
 * their streams interleave and the slowest fall behind the fastest (in bench:proxy's 100 watchers of
 * one object, often by more than a few lines). So each line links to the line that followed it on the
 * stream that decoded it first, and each stream remembers the last line it got (its LineCursor): its
 * next line is most often the linked one, found with one comparison of bytes whatever the lag and
 * however the lines of other resources interleave. Comparing bytes spares decoding the line to text
 * and hashing that for the map, which holds the lines the ring no longer finds.
 */
export class WatchLines {
  private readonly byText = new Map<string, DecodedLine>();
  private textChars = 0;
  private readonly ring: Array<RecentLine | undefined> = new Array<RecentLine | undefined>(RING_SIZE);
  private newest = 0;
  private ringBytes = 0;

  /** Decodes one event line of a stream; `cursor`: the stream's place among the recent lines, moved on here. */
  decode(raw: Buffer, fallbackKind: string | undefined, cursor?: LineCursor): RelayedWatchEvent {
    return eventOf(raw, this.decodeShared(raw, cursor), fallbackKind);
  }

  /** How many lines the ring holds and their copies' total length (for tests). */
  held(): { lines: number; bytes: number } {
    let lines = 0;
    for (const line of this.ring) if (line !== undefined) lines++;
    return { lines, bytes: this.ringBytes };
  }

  private decodeShared(raw: Buffer, cursor: LineCursor | undefined): DecodedLine | null {
    const known = this.recent(raw, cursor);
    if (known !== undefined) return known;
    const text = raw.toString('utf8');
    if (text.length > MAX_SHARED_LINE) return parseLine(text);
    let decoded = this.byText.get(text);
    if (decoded === undefined) {
      const parsed = parseLine(text);
      if (!parsed || parsed.object.kind === 'Secret' || parsed.object.kind === undefined) return parsed;
      decoded = parsed;
      decoded.shared = {};
      while (this.byText.size > 0 && (this.byText.size >= RECENT_LINES || this.textChars + text.length > RECENT_CHARS)) {
        const oldest = this.byText.keys().next().value!;
        this.byText.delete(oldest);
        this.textChars -= oldest.length;
      }
      this.byText.set(text, decoded);
      this.textChars += text.length;
    }
    // A copy: the line is a slice of an upstream chunk, which must not stay alive through it.
    const line: RecentLine = { n: ++this.newest, raw: Buffer.from(raw), decoded, next: 0 };
    this.remember(line);
    follow(cursor, cursor === undefined ? undefined : this.recentLine(cursor.n), line);
    return decoded;
  }

  /** Line `n` if the ring still holds it. */
  private recentLine(n: number): RecentLine | undefined {
    const line = n > 0 ? this.ring[n % RING_SIZE] : undefined;
    return line !== undefined && line.n === n ? line : undefined;
  }

  /** Puts `line` (the newest) in the ring, in place of the line RING_SIZE before it and of older ones past RING_BYTES. */
  private remember(line: RecentLine): void {
    const slot = line.n % RING_SIZE;
    this.ringBytes += line.raw.length - (this.ring[slot]?.raw.length ?? 0);
    this.ring[slot] = line;
    for (let n = line.n - RING_SIZE + 1; this.ringBytes > RING_BYTES && n < line.n; n++) {
      const old = this.recentLine(n);
      if (old === undefined) continue;
      this.ringBytes -= old.raw.length;
      this.ring[n % RING_SIZE] = undefined;
    }
  }

  /** The decoding of `raw` if it is a recent line; moves `cursor` on to it and links the stream's last line to it. */
  private recent(raw: Buffer, cursor: LineCursor | undefined): DecodedLine | undefined {
    const last = cursor === undefined ? undefined : this.recentLine(cursor.n);
    const linked = last === undefined ? undefined : this.recentLine(last.next);
    let found = linked !== undefined && sameBytes(linked.raw, raw) ? linked : undefined;
    for (let n = this.newest; found === undefined && n > 0 && n > this.newest - NEWEST_FEW; n--) {
      const r = this.recentLine(n);
      if (r !== undefined && sameBytes(r.raw, raw)) found = r;
    }
    if (found === undefined) return undefined;
    follow(cursor, last, found);
    return found.decoded;
  }
}

/** Decodes a line on its own (not shared with other streams): what the proxy makes up, and non-relayed streams. */
export function decodeWatchLine(raw: Buffer, fallbackKind: string | undefined): RelayedWatchEvent {
  return eventOf(raw, parseLine(raw.toString('utf8')), fallbackKind);
}

/** A watch event line as the API server would write it. */
export function encodeWatchEvent(type: WatchEventType, object: KubeObject, fallbackKind?: string): RelayedWatchEvent {
  return decodeWatchLine(Buffer.from(JSON.stringify({ type, object }) + '\n'), fallbackKind);
}

function eventOf(raw: Buffer, decoded: DecodedLine | null, fallbackKind: string | undefined): RelayedWatchEvent {
  if (!decoded) return { raw };
  const { object, type } = decoded;
  const key = type !== 'ERROR' && type !== 'BOOKMARK' ? keyOfDecoded(decoded, fallbackKind) || undefined : undefined;
  const rv = object.metadata?.resourceVersion;
  // Every field in the literal (absent ones undefined): properties added later would need a
  // backing store of their own, an allocation per event and stream.
  return { raw, type, object, key, resourceVersion: typeof rv === 'string' ? rv : undefined, shared: decoded.shared };
}

/** The event's key; a shared line computes it once for every stream it reaches. */
function keyOfDecoded(decoded: DecodedLine, fallbackKind: string | undefined): ObjectKey | undefined {
  if (decoded.key !== undefined) return decoded.key;
  const key = keyOfAnswer(decoded.object, fallbackKind);
  const kind = decoded.object.kind;
  if (key !== undefined && typeof kind === 'string' && kind !== '') decoded.key = key;
  return key;
}

function parseLine(text: string): DecodedLine | null {
  let parsed: unknown;
  try {
    // JSON.parse skips the surrounding whitespace (the newline) itself; a blank line throws.
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(parsed) || typeof parsed.type !== 'string' || !WATCH_EVENT_TYPES.has(parsed.type) || !isObject(parsed.object)) {
    return null;
  }
  return { type: parsed.type as WatchEventType, object: parsed.object as KubeObject };
}

function follow(cursor: LineCursor | undefined, last: RecentLine | undefined, line: RecentLine): void {
  if (cursor !== undefined) cursor.n = line.n;
  if (last !== undefined && last.next === 0) last.next = line.n;
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && a.equals(b);
}
