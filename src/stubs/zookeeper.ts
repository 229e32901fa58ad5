/**
 * A minimal ZooKeeper server speaking the real wire protocol (jute, see jute.ts), for controllers
 * that talk to the ZooKeeper ensemble they manage (pravega zookeeper-operator keeps the cluster size
 * in a znode). One `ZooKeeperEnsemble` is one in-memory data tree with its sessions; every stub
 * listener of an application (each pod's IP, the client Service's IP) serves the same ensemble, as
 * the members of a real ensemble serve the same data.
 *
 * Served: connect (new sessions and reconnects of live ones; an unknown or expired session gets
 * session id 0, as the real server answers), create / create2 / createContainer (persistent,
 * ephemeral, sequential; NoNode without the parent, NodeExists, NoChildrenForEphemerals),
 * delete (BadVersion, NotEmpty), exists, getData, setData (version check), getChildren,
 * getChildren2, getACL, sync, ping, close, setWatches, setAuth, one-shot watches (exists/getData
 * data watches, getChildren child watches) and the four-letter words ruok, isro, srvr and stat.
 * Not served (answered Unimplemented): multi, check, reconfig, setACL, quotas, SASL.
 *
 * The fresh tree holds `/zookeeper`, `/zookeeper/quota` and `/zookeeper/config` (empty: no
 * dynamic reconfiguration), as a 3.5+ standalone server has.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { JuteError, JuteReader, JuteWriter, PacketSplitter } from './jute.js';

/** Opcodes (org.apache.zookeeper.ZooDefs.OpCode). */
export const ZK_OP = {
  notification: 0,
  create: 1,
  delete: 2,
  exists: 3,
  getData: 4,
  setData: 5,
  getACL: 6,
  setACL: 7,
  getChildren: 8,
  sync: 9,
  ping: 11,
  getChildren2: 12,
  check: 13,
  multi: 14,
  create2: 15,
  reconfig: 16,
  createContainer: 19,
  setAuth: 100,
  setWatches: 101,
  close: -11,
} as const;

/** Error codes (KeeperException.Code). */
export const ZK_ERR = {
  ok: 0,
  unimplemented: -6,
  badArguments: -8,
  noNode: -101,
  badVersion: -103,
  noChildrenForEphemerals: -108,
  nodeExists: -110,
  notEmpty: -111,
  invalidACL: -114,
} as const;

const ERROR_NAMES = new Map<number, string>([
  [ZK_ERR.ok, 'ok'],
  [ZK_ERR.unimplemented, 'Unimplemented'],
  [ZK_ERR.badArguments, 'BadArguments'],
  [ZK_ERR.noNode, 'NoNode'],
  [ZK_ERR.badVersion, 'BadVersion'],
  [ZK_ERR.noChildrenForEphemerals, 'NoChildrenForEphemerals'],
  [ZK_ERR.nodeExists, 'NodeExists'],
  [ZK_ERR.notEmpty, 'NotEmpty'],
  [ZK_ERR.invalidACL, 'InvalidACL'],
]);

const OP_NAMES = new Map<number, string>(Object.entries(ZK_OP).map(([name, code]) => [code, name]));

/** Create flags (CreateMode). */
const FLAG_EPHEMERAL = 1;
const FLAG_SEQUENTIAL = 2;

/** Watch notification event types and the SyncConnected state (Watcher.Event). */
const EVENT_NODE_CREATED = 1;
const EVENT_NODE_DELETED = 2;
const EVENT_NODE_DATA_CHANGED = 3;
const EVENT_NODE_CHILDREN_CHANGED = 4;
const STATE_SYNC_CONNECTED = 3;

/** xids of the replies that answer no numbered request. */
const XID_NOTIFICATION = -1;
const XID_PING = -2;

/** The server's tickTime; negotiated session timeouts lie between 2 and 20 ticks, as by default. */
const TICK_MS = 2000;

export interface ZkAcl {
  perms: number;
  scheme: string;
  id: string;
}

interface ZNode {
  data: Buffer;
  acl: ZkAcl[];
  czxid: bigint;
  mzxid: bigint;
  pzxid: bigint;
  ctime: bigint;
  mtime: bigint;
  version: number;
  cversion: number;
  aversion: number;
  ephemeralOwner: bigint;
  children: Set<string>;
}

interface Session {
  id: bigint;
  password: Buffer;
  timeoutMs: number;
  connection: ZkConnection | undefined;
  expiry: NodeJS.Timeout | undefined;
}

/** One call the stub answered, for the trace. */
export interface ZkCall {
  operation: string;
  path?: string;
  /** "ok" or the error's name. */
  result: string;
  session?: string;
}

class ZkError extends Error {
  constructor(readonly code: number) {
    super(ERROR_NAMES.get(code) ?? `error ${code}`);
  }
}

const OPEN_ACL_UNSAFE: ZkAcl[] = [{ perms: 31, scheme: 'world', id: 'anyone' }];

export class ZooKeeperEnsemble {
  private nodes = new Map<string, ZNode>();
  private zxid = 0n;
  private readonly sessions = new Map<bigint, Session>();
  private nextSession: bigint;

  constructor() {
    // Real session ids carry the server id in the top byte and a time-derived counter below.
    this.nextSession = (1n << 56n) | ((BigInt(Date.now()) << 8n) & 0xffffffffffffffn);
    this.reset();
  }

  /** Empties the tree and ends every session: a fresh ensemble (its data volumes gone). */
  reset(): void {
    for (const s of this.sessions.values()) {
      if (s.expiry) clearTimeout(s.expiry);
      s.connection?.destroy();
    }
    this.sessions.clear();
    this.nodes = new Map();
    this.zxid = 0n;
    this.nodes.set('/', this.newNode(Buffer.alloc(0), OPEN_ACL_UNSAFE, 0n));
    for (const path of ['/zookeeper', '/zookeeper/quota', '/zookeeper/config']) this.createNode(path, Buffer.alloc(0), OPEN_ACL_UNSAFE, 0);
    // The real DataTree adds its system nodes without counting them as changes: zxid 0, cversion 0.
    for (const n of this.nodes.values()) Object.assign(n, { czxid: 0n, mzxid: 0n, pzxid: 0n, cversion: 0 });
    this.zxid = 0n;
  }

  /** Ends every connection and timer (the stub is shutting down). */
  close(): void {
    for (const s of this.sessions.values()) {
      if (s.expiry) clearTimeout(s.expiry);
      s.connection?.destroy();
    }
    this.sessions.clear();
  }

  /** Serves one client connection; `onCall` hears every answered call. */
  serve(socket: Socket, onCall: (call: ZkCall) => void): void {
    new ZkConnection(this, socket, onCall);
  }

  /** The data of a znode (for tests and inspection), or undefined. */
  get(path: string): { data: Buffer; version: number; children: string[] } | undefined {
    const n = this.nodes.get(path);
    return n && { data: n.data, version: n.version, children: [...n.children].sort() };
  }

  get lastZxid(): bigint {
    return this.zxid;
  }

  // --- sessions ---

  openSession(requested: { sessionId: bigint; password: Buffer | null; timeoutMs: number }, connection: ZkConnection): Session | undefined {
    const timeoutMs = Math.min(Math.max(requested.timeoutMs, 2 * TICK_MS), 20 * TICK_MS);
    if (requested.sessionId !== 0n) {
      const existing = this.sessions.get(requested.sessionId);
      if (!existing || !requested.password || !existing.password.equals(requested.password)) return undefined;
      if (existing.expiry) clearTimeout(existing.expiry);
      existing.expiry = undefined;
      const previous = existing.connection;
      existing.connection = connection;
      existing.timeoutMs = timeoutMs;
      if (previous && previous !== connection) previous.destroy();
      return existing;
    }
    const session: Session = { id: this.nextSession++, password: randomBytes(16), timeoutMs, connection, expiry: undefined };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The connection is gone without a close request: the session expires unless the client reconnects in time. */
  disconnected(session: Session, connection: ZkConnection): void {
    if (session.connection !== connection) return;
    session.connection = undefined;
    if (!this.sessions.has(session.id)) return;
    session.expiry = setTimeout(() => this.closeSession(session), session.timeoutMs);
    session.expiry.unref();
  }

  closeSession(session: Session): void {
    if (session.expiry) clearTimeout(session.expiry);
    if (!this.sessions.delete(session.id)) return;
    const owned = [...this.nodes.entries()].filter(([, n]) => n.ephemeralOwner === session.id).map(([p]) => p);
    // Deepest first: an ephemeral node has no children, but keep the order a real server's would be.
    for (const path of owned.sort((a, b) => b.length - a.length)) this.deleteNode(path, -1);
  }

  // --- the tree ---

  private newNode(data: Buffer, acl: ZkAcl[], ephemeralOwner: bigint): ZNode {
    const now = BigInt(Date.now());
    return {
      data,
      acl,
      czxid: this.zxid,
      mzxid: this.zxid,
      pzxid: this.zxid,
      ctime: now,
      mtime: now,
      version: 0,
      cversion: 0,
      aversion: 0,
      ephemeralOwner,
      children: new Set(),
    };
  }

  private node(path: string): ZNode {
    validatePath(path);
    const n = this.nodes.get(path);
    if (!n) throw new ZkError(ZK_ERR.noNode);
    return n;
  }

  createNode(path: string, data: Buffer, acl: ZkAcl[], flags: number, session?: bigint): string {
    validatePath(path);
    if (path === '/') throw new ZkError(ZK_ERR.nodeExists);
    if (acl.length === 0) throw new ZkError(ZK_ERR.invalidACL);
    const cut = path.lastIndexOf('/');
    const parentPath = cut === 0 ? '/' : path.slice(0, cut);
    const parent = this.nodes.get(parentPath);
    if (!parent) throw new ZkError(ZK_ERR.noNode);
    if (parent.ephemeralOwner !== 0n) throw new ZkError(ZK_ERR.noChildrenForEphemerals);
    const finalPath = flags & FLAG_SEQUENTIAL ? path + String(parent.cversion).padStart(10, '0') : path;
    if (this.nodes.has(finalPath)) throw new ZkError(ZK_ERR.nodeExists);
    this.zxid++;
    const ephemeral = (flags & FLAG_EPHEMERAL) !== 0 && session !== undefined ? session : 0n;
    this.nodes.set(finalPath, this.newNode(data, acl, ephemeral));
    parent.children.add(finalPath.slice(cut + 1));
    parent.cversion++;
    parent.pzxid = this.zxid;
    this.notify(finalPath, EVENT_NODE_CREATED);
    this.notify(parentPath, EVENT_NODE_CHILDREN_CHANGED);
    return finalPath;
  }

  deleteNode(path: string, version: number): void {
    if (path === '/') throw new ZkError(ZK_ERR.badArguments);
    const n = this.node(path);
    if (version !== -1 && version !== n.version) throw new ZkError(ZK_ERR.badVersion);
    if (n.children.size > 0) throw new ZkError(ZK_ERR.notEmpty);
    this.zxid++;
    this.nodes.delete(path);
    const cut = path.lastIndexOf('/');
    const parentPath = cut === 0 ? '/' : path.slice(0, cut);
    const parent = this.nodes.get(parentPath);
    if (parent) {
      parent.children.delete(path.slice(cut + 1));
      parent.cversion++;
      parent.pzxid = this.zxid;
    }
    this.notify(path, EVENT_NODE_DELETED);
    this.notify(parentPath, EVENT_NODE_CHILDREN_CHANGED);
  }

  setData(path: string, data: Buffer, version: number): ZNode {
    const n = this.node(path);
    if (version !== -1 && version !== n.version) throw new ZkError(ZK_ERR.badVersion);
    this.zxid++;
    n.data = data;
    n.version++;
    n.mzxid = this.zxid;
    n.mtime = BigInt(Date.now());
    this.notify(path, EVENT_NODE_DATA_CHANGED);
    return n;
  }

  lookup(path: string): ZNode {
    return this.node(path);
  }

  exists(path: string): ZNode | undefined {
    validatePath(path);
    return this.nodes.get(path);
  }

  private notify(path: string, type: number): void {
    for (const s of this.sessions.values()) s.connection?.trigger(path, type);
  }
}

/** PathUtils.validatePath: absolute, no trailing slash, no empty, "." or ".." segments, no NUL. */
function validatePath(path: string): void {
  if (!path.startsWith('/')) throw new ZkError(ZK_ERR.badArguments);
  if (path === '/') return;
  if (path.endsWith('/') || path.includes('\0')) throw new ZkError(ZK_ERR.badArguments);
  for (const segment of path.slice(1).split('/')) {
    if (segment === '' || segment === '.' || segment === '..') throw new ZkError(ZK_ERR.badArguments);
  }
}

function writeStat(w: JuteWriter, n: ZNode): void {
  w.long(n.czxid)
    .long(n.mzxid)
    .long(n.ctime)
    .long(n.mtime)
    .int(n.version)
    .int(n.cversion)
    .int(n.aversion)
    .long(n.ephemeralOwner)
    .int(n.data.length)
    .int(n.children.size)
    .long(n.pzxid);
}

function readAcl(r: JuteReader): ZkAcl {
  return { perms: r.int(), scheme: r.ustring(), id: r.ustring() };
}

const FOUR_LETTER_WORDS = new Set(['ruok', 'isro', 'srvr', 'stat']);

class ZkConnection {
  private readonly splitter = new PacketSplitter();
  private session: Session | undefined;
  private closed = false;
  /** One-shot watches of this connection: data (exists, getData) and child (getChildren). */
  private readonly dataWatches = new Set<string>();
  private readonly childWatches = new Set<string>();

  constructor(
    private readonly ensemble: ZooKeeperEnsemble,
    private readonly socket: Socket,
    private readonly onCall: (call: ZkCall) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
      if (this.session) this.ensemble.disconnected(this.session, this);
    });
  }

  destroy(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private get sessionName(): string | undefined {
    return this.session ? '0x' + this.session.id.toString(16) : undefined;
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    if (!this.session && this.splitter.buffered.length === 0 && chunk.length >= 4) {
      const word = chunk.subarray(0, 4).toString('latin1');
      if (FOUR_LETTER_WORDS.has(word)) return this.fourLetterWord(word);
    }
    let packets: Buffer[];
    try {
      packets = this.splitter.push(chunk);
    } catch {
      this.destroy();
      return;
    }
    for (const packet of packets) {
      if (this.closed) return;
      try {
        if (!this.session) this.connect(new JuteReader(packet));
        else this.request(new JuteReader(packet));
      } catch (err) {
        // A packet that does not decode: the real server drops the connection too.
        if (err instanceof JuteError) this.destroy();
        else throw err;
      }
    }
  }

  private fourLetterWord(word: string): void {
    const answers: Record<string, string> = {
      ruok: 'imok',
      isro: 'rw',
      srvr: `Zookeeper version: 3.5.6-kperturb-stub\nLatency min/avg/max: 0/0/0\nReceived: 0\nSent: 0\nConnections: 1\nOutstanding: 0\nZxid: 0x${this.ensemble.lastZxid.toString(16)}\nMode: standalone\nNode count: 0\n`,
    };
    const text = answers[word] ?? answers.srvr!;
    this.onCall({ operation: word, result: 'ok' });
    this.socket.end(text);
    this.closed = true;
  }

  private connect(r: JuteReader): void {
    const protocolVersion = r.int();
    const lastZxidSeen = r.long();
    const timeOut = r.int();
    const sessionId = r.long();
    const password = r.buffer();
    // readOnly (bool) follows from 3.4 clients on; the Go client of 2019 does not send it.
    void protocolVersion;
    void lastZxidSeen;
    const session = this.ensemble.openSession({ sessionId, password, timeoutMs: timeOut }, this);
    const w = new JuteWriter();
    if (!session) {
      // An unknown or expired session: timeout 0 and session id 0 tell the client it expired.
      w.int(0).int(0).long(0n).buffer(Buffer.alloc(16)).bool(false);
      this.onCall({ operation: 'connect', result: 'SessionExpired', session: '0x' + sessionId.toString(16) });
      this.socket.end(w.packet());
      this.closed = true;
      return;
    }
    this.session = session;
    w.int(0).int(session.timeoutMs).long(session.id).buffer(session.password).bool(false);
    this.socket.write(w.packet());
    this.onCall({ operation: sessionId === 0n ? 'connect' : 'reconnect', result: 'ok', ...(this.sessionName ? { session: this.sessionName } : {}) });
  }

  private reply(xid: number, err: number, body?: JuteWriter): void {
    if (this.closed) return;
    const w = new JuteWriter().int(xid).long(this.ensemble.lastZxid).int(err);
    const header = w.bytes();
    const payload = err === ZK_ERR.ok && body ? Buffer.concat([header, body.bytes()]) : header;
    const len = Buffer.alloc(4);
    len.writeInt32BE(payload.length);
    this.socket.write(Buffer.concat([len, payload]));
  }

  /** Sends a watch notification if this connection watches `path` for `type`; watches fire once. */
  trigger(path: string, type: number): void {
    let fire: boolean;
    if (type === EVENT_NODE_CHILDREN_CHANGED) fire = this.childWatches.delete(path);
    else {
      fire = this.dataWatches.delete(path);
      if (type === EVENT_NODE_DELETED) fire = this.childWatches.delete(path) || fire;
    }
    if (!fire || this.closed) return;
    const body = new JuteWriter().int(type).int(STATE_SYNC_CONNECTED).ustring(path).bytes();
    const header = new JuteWriter().int(XID_NOTIFICATION).long(-1n).int(ZK_ERR.ok).bytes();
    const len = Buffer.alloc(4);
    len.writeInt32BE(header.length + body.length);
    this.socket.write(Buffer.concat([len, header, body]));
  }

  private request(r: JuteReader): void {
    const xid = r.int();
    const op = r.int();
    const name = OP_NAMES.get(op) ?? `op${op}`;
    let path: string | undefined;
    const record = (result: string) => {
      if (op === ZK_OP.ping) return; // pings are the session's heartbeat, not calls
      this.onCall({ operation: name, ...(path !== undefined ? { path } : {}), result, ...(this.sessionName ? { session: this.sessionName } : {}) });
    };
    try {
      const w = new JuteWriter();
      switch (op) {
        case ZK_OP.ping:
          this.reply(XID_PING, ZK_ERR.ok);
          return record('ok');
        case ZK_OP.close: {
          record('ok');
          this.reply(xid, ZK_ERR.ok);
          const session = this.session!;
          this.session = undefined;
          this.ensemble.closeSession(session);
          this.closed = true;
          this.socket.end();
          return;
        }
        case ZK_OP.create:
        case ZK_OP.create2:
        case ZK_OP.createContainer: {
          path = r.ustring();
          const data = r.buffer() ?? Buffer.alloc(0);
          const acl = r.vector(readAcl);
          const flags = r.int();
          const created = this.ensemble.createNode(path, data, acl, flags, this.session!.id);
          w.ustring(created);
          if (op !== ZK_OP.create) writeStat(w, this.ensemble.lookup(created));
          break;
        }
        case ZK_OP.delete: {
          path = r.ustring();
          this.ensemble.deleteNode(path, r.int());
          break;
        }
        case ZK_OP.exists: {
          path = r.ustring();
          const watch = r.bool();
          const n = this.ensemble.exists(path);
          if (watch) this.dataWatches.add(path);
          if (!n) throw new ZkError(ZK_ERR.noNode);
          writeStat(w, n);
          break;
        }
        case ZK_OP.getData: {
          path = r.ustring();
          const watch = r.bool();
          const n = this.ensemble.lookup(path);
          if (watch) this.dataWatches.add(path);
          w.buffer(n.data);
          writeStat(w, n);
          break;
        }
        case ZK_OP.setData: {
          path = r.ustring();
          const data = r.buffer() ?? Buffer.alloc(0);
          writeStat(w, this.ensemble.setData(path, data, r.int()));
          break;
        }
        case ZK_OP.getChildren:
        case ZK_OP.getChildren2: {
          path = r.ustring();
          const watch = r.bool();
          const n = this.ensemble.lookup(path);
          if (watch) this.childWatches.add(path);
          w.vector([...n.children].sort(), (out, c) => out.ustring(c));
          if (op === ZK_OP.getChildren2) writeStat(w, n);
          break;
        }
        case ZK_OP.getACL: {
          path = r.ustring();
          const n = this.ensemble.lookup(path);
          w.vector(n.acl, (out, a) => out.int(a.perms).ustring(a.scheme).ustring(a.id));
          writeStat(w, n);
          break;
        }
        case ZK_OP.sync:
          path = r.ustring();
          w.ustring(path);
          break;
        case ZK_OP.setWatches: {
          r.long(); // relativeZxid: the stub keeps no history to replay missed events from
          for (const p of r.vector((x) => x.ustring())) this.dataWatches.add(p);
          for (const p of r.vector((x) => x.ustring())) this.dataWatches.add(p);
          for (const p of r.vector((x) => x.ustring())) this.childWatches.add(p);
          break;
        }
        case ZK_OP.setAuth:
          break;
        default:
          throw new ZkError(ZK_ERR.unimplemented);
      }
      this.reply(xid, ZK_ERR.ok, w);
      record('ok');
    } catch (err) {
      if (!(err instanceof ZkError)) throw err;
      this.reply(xid, err.code);
      record(err.message);
    }
  }
}
