/**
 * Plays the outcome of one `pods/exec` or `pods/attach` call to the client the way a kubelet serves it
 * (k8s.io/kubelet/pkg/cri/streaming/remotecommand: httpstream.go for SPDY, websocket.go for
 * WebSockets): negotiate the stream protocol, upgrade, wait for the streams the query asked for,
 * write stdout/stderr, then the status on the error stream, and half-close everything.
 *
 * The command never runs: its exit code and output come from the caller (exec rules). Shared by the
 * proxy (for the controller, on any cluster) and the embedded cluster (for kubectl).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { SpdyServerConnection, type SpdyStream } from './spdy.js';
import { WebSocketChannels, websocketAccept } from './websocket-channels.js';
import { boolParam } from '../model/query-params.js';

/** SPDY stream protocols (X-Stream-Protocol-Version), newest first, as the kubelet accepts them. */
export const SPDY_STREAM_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'] as const;
/** WebSocket subprotocols (Sec-WebSocket-Protocol). */
export const WEBSOCKET_STREAM_PROTOCOLS = [
  'v5.channel.k8s.io',
  'v4.channel.k8s.io',
  'v4.base64.channel.k8s.io',
  'channel.k8s.io',
  'base64.channel.k8s.io',
] as const;

/** kubelet's default: a client that has not opened its streams by then is cut off. */
const STREAM_CREATION_TIMEOUT_MS = 30_000;
/**
 * After the last byte, the client closes the connection (client-go: `defer conn.Close()`). Ending it
 * ourselves at once could lose output: spdystream drops frames still queued when the socket ends.
 * A client that never closes is cut off after this.
 */
const LINGER_MS = 30_000;
/**
 * A kubelet's first WebSocket message comes after it has started the command in the container (tens
 * of ms or more); the answer is held that long after the 101. Written in the same instant as the 101,
 * the output and the exit status are lost by the WebSocket executor of client-go 1.30 to 1.33
 * (kubectl 1.32 among them), which reads the connection before it has created its streams and
 * discards messages for the streams it does not have yet ("Unknown stream id 1, discarding
 * message"; kubernetes/kubernetes#131189, fixed by #131203): `kubectl exec` then fails with "error:
 * closed all streams". No message of such a client says that it is ready, so the wait is a time.
 */
export const WEBSOCKET_ANSWER_DELAY_MS = 100;

export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** The query of an exec/attach call; a string is the BadRequest message for a query without streams. */
export function streamOptionsOf(query: URLSearchParams): StreamOptions | string {
  // PodExecOptions' booleans, read by apimachinery's rule: `stdout=True` and `tty=yes` are on too.
  const flag = (name: string) => boolParam(query, name);
  const tty = flag('tty');
  // The kubelet drops stderr under a TTY: the terminal merges it into stdout.
  const options = { stdin: flag('stdin'), stdout: flag('stdout'), stderr: flag('stderr') && !tty, tty };
  if (!options.stdin && !options.stdout && !options.stderr) return 'you must specify at least 1 of stdin, stdout, stderr';
  return options;
}

export interface CommandOutcome {
  /** For the failure message (`error executing command [...]`); empty for attach. */
  command: string[];
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface SessionReport {
  /** 101, or the HTTP status the upgrade was refused with. */
  status: number;
  transport: 'spdy' | 'websocket';
  /** The negotiated stream protocol ('' for a legacy client that named none). */
  protocol?: string;
  /** The output and status reached the client's streams. */
  delivered: boolean;
  /** Why not, when not. */
  reason?: string;
}

/** metav1.Status of the v4 error stream, serialized as the kubelet's json.Marshal writes it. */
export function exitStatusJson(outcome: CommandOutcome): string {
  if (outcome.exitCode === 0) return '{"metadata":{},"status":"Success"}';
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: failureMessage(outcome),
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(outcome.exitCode) }] },
  });
}

function failureMessage(outcome: CommandOutcome): string {
  return `command terminated with non-zero exit code: error executing command [${outcome.command.join(' ')}], exit code ${outcome.exitCode}`;
}

/** What the error stream carries for `protocol`: JSON from v4 on, the bare message (on failure only) before. */
function errorStreamPayload(protocol: string, outcome: CommandOutcome): string {
  if (protocol.startsWith('v4.') || protocol.startsWith('v5.')) return exitStatusJson(outcome);
  return outcome.exitCode === 0 ? '' : failureMessage(outcome);
}

/** A raw HTTP answer on a socket that was not upgraded. */
export function refuseUpgrade(socket: Duplex, status: number, statusText: string, body: string, contentType: string, extraHeaders: string[] = []): void {
  if (!socket.writable) return;
  const headers = [`Content-Type: ${contentType}`, `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', ...extraHeaders];
  socket.end(`HTTP/1.1 ${status} ${statusText}\r\n${headers.join('\r\n')}\r\n\r\n${body}`);
}

function headerList(value: string | string[] | undefined): string[] {
  const all = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return all
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return String(req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/**
 * Upgrades `socket` (after an HTTP `upgrade` event) and plays `outcome`. `report` is called exactly
 * once: when the upgrade is refused, when everything was written, or when the client went away first.
 */
export function serveRemoteCommand(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  options: StreamOptions,
  outcome: CommandOutcome,
  report: (r: SessionReport) => void,
): void {
  if (isWebSocketUpgrade(req)) serveWebSocket(req, socket, head, options, outcome, report);
  else serveSpdy(req, socket, head, options, outcome, report);
}

function serveSpdy(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  options: StreamOptions,
  outcome: CommandOutcome,
  report: (r: SessionReport) => void,
): void {
  const connection = String(req.headers.connection ?? '').toLowerCase();
  const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
  if (!connection.includes('upgrade') || !upgrade.includes('spdy/3.1')) {
    refuseUpgrade(socket, 400, 'Bad Request', 'unable to upgrade: missing upgrade headers in request\n', 'text/plain; charset=utf-8');
    report({ status: 400, transport: 'spdy', delivered: false, reason: 'missing upgrade headers' });
    return;
  }
  const offered = headerList(req.headers['x-stream-protocol-version']);
  const protocol = offered.length === 0 ? '' : offered.find((p) => (SPDY_STREAM_PROTOCOLS as readonly string[]).includes(p));
  if (protocol === undefined) {
    const message = `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${SPDY_STREAM_PROTOCOLS.join(' ')}]`;
    refuseUpgrade(
      socket,
      403,
      'Forbidden',
      message + '\n',
      'text/plain; charset=utf-8',
      SPDY_STREAM_PROTOCOLS.map((p) => `X-Accepted-Stream-Protocol-Versions: ${p}`),
    );
    report({ status: 403, transport: 'spdy', delivered: false, reason: message });
    return;
  }
  socket.write(
    'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n' +
      (protocol ? `X-Stream-Protocol-Version: ${protocol}\r\n` : '') +
      '\r\n',
  );
  const conn = new SpdyServerConnection(socket);
  // v1/v2 have no resize stream.
  const resizes = options.tty && (protocol.startsWith('v3.') || protocol.startsWith('v4.') || protocol.startsWith('v5.'));
  const expected = 1 + Number(options.stdin) + Number(options.stdout) + Number(options.stderr) + Number(resizes);
  const streams = new Map<string, SpdyStream>();
  let received = 0;
  let reported = false;
  const finish = (r: Omit<SessionReport, 'status' | 'transport' | 'protocol'>) => {
    if (reported) return;
    reported = true;
    report({ status: 101, transport: 'spdy', protocol, ...r });
  };
  const creationTimer = setTimeout(() => {
    finish({ delivered: false, reason: 'timed out waiting for the client to create its streams' });
    conn.goAway();
  }, STREAM_CREATION_TIMEOUT_MS);
  creationTimer.unref();
  let lingerTimer: NodeJS.Timeout | undefined;
  conn.on('stream', (stream) => {
    const type = stream.header('streamtype') ?? '';
    if (!['error', 'stdin', 'stdout', 'stderr', 'resize'].includes(type)) return;
    streams.set(type, stream);
    if (++received < expected) return;
    clearTimeout(creationTimer);
    if (options.tty) streams.get('stdout')?.end(outcome.stdout + outcome.stderr);
    else {
      streams.get('stdout')?.end(outcome.stdout);
      streams.get('stderr')?.end(outcome.stderr);
    }
    streams.get('error')?.end(errorStreamPayload(protocol, outcome));
    // The process is gone: its stdin and terminal are closed too.
    streams.get('stdin')?.end();
    streams.get('resize')?.end();
    finish({ delivered: true });
    lingerTimer = setTimeout(() => conn.goAway(), LINGER_MS);
    lingerTimer.unref();
  });
  conn.on('close', (reason) => {
    clearTimeout(creationTimer);
    if (lingerTimer) clearTimeout(lingerTimer);
    finish({ delivered: false, reason });
    socket.destroy();
  });
  if (head.length > 0) conn.push(head);
}

/** Channel numbers of the WebSocket protocols. */
const STDOUT_CHANNEL = 1;
const STDERR_CHANNEL = 2;
const ERROR_CHANNEL = 3;

function serveWebSocket(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  options: StreamOptions,
  outcome: CommandOutcome,
  report: (r: SessionReport) => void,
): void {
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || key === '') {
    refuseUpgrade(socket, 400, 'Bad Request', 'missing Sec-WebSocket-Key\n', 'text/plain; charset=utf-8');
    report({ status: 400, transport: 'websocket', delivered: false, reason: 'missing Sec-WebSocket-Key' });
    return;
  }
  const offered = headerList(req.headers['sec-websocket-protocol']);
  // As wsstream's handshake: no subprotocol means the plain binary channel protocol.
  const protocol = offered.length === 0 ? '' : offered.find((p) => (WEBSOCKET_STREAM_PROTOCOLS as readonly string[]).includes(p));
  if (protocol === undefined) {
    const message = `requested protocol(s) are not supported: [${offered.join(' ')}]; supports [${WEBSOCKET_STREAM_PROTOCOLS.join(' ')}]`;
    refuseUpgrade(socket, 403, 'Forbidden', message + '\n', 'text/plain; charset=utf-8');
    report({ status: 403, transport: 'websocket', protocol: offered.join(', '), delivered: false, reason: message });
    return;
  }
  socket.write(
    'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      `Sec-WebSocket-Accept: ${websocketAccept(key)}\r\n` +
      (protocol ? `Sec-WebSocket-Protocol: ${protocol}\r\n` : '') +
      '\r\n',
  );
  let reported = false;
  const finish = (r: Omit<SessionReport, 'status' | 'transport' | 'protocol'>) => {
    if (reported) return;
    reported = true;
    report({ status: 101, transport: 'websocket', protocol, ...r });
  };
  let answer: NodeJS.Timeout | undefined;
  const channels = new WebSocketChannels(socket, protocol.includes('base64'), (reason) => {
    clearTimeout(answer);
    finish({ delivered: false, reason });
    socket.destroy();
  });
  if (head.length > 0) channels.push(head);
  answer = setTimeout(() => {
    // The kubelet drops what is written to a channel the query did not ask for.
    if (options.tty) {
      if (options.stdout) channels.send(STDOUT_CHANNEL, outcome.stdout + outcome.stderr);
    } else {
      if (options.stdout) channels.send(STDOUT_CHANNEL, outcome.stdout);
      if (options.stderr) channels.send(STDERR_CHANNEL, outcome.stderr);
    }
    channels.send(ERROR_CHANNEL, errorStreamPayload(protocol, outcome));
    finish({ delivered: true });
    channels.close();
  }, WEBSOCKET_ANSWER_DELAY_MS);
}
