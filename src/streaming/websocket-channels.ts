/**
 * The server side of Kubernetes' WebSocket channel protocols (k8s.io/apimachinery's wsstream, which
 * kube-apiserver and the kubelet serve, and kubectl >= 1.30 tries before SPDY): every message starts
 * with a channel byte (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize); `base64.` variants send text
 * messages whose channel is an ASCII digit and whose data is base64; `v5.channel.k8s.io` adds the
 * client's half-close signal (255, channel), which a command that ignores stdin can ignore too.
 *
 * Only what a server of short-lived commands needs: the handshake (RFC 6455 section 4.2), unmasked
 * server frames, and a reader of the client's masked frames that answers PING and CLOSE.
 */
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { readWebSocketFrame } from './websocket-frame.js';

const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;

export function websocketAccept(key: string): string {
  return createHash('sha1')
    .update(key + WEBSOCKET_GUID)
    .digest('base64');
}

/** One server-to-client frame, unfragmented and unmasked. */
export function websocketFrame(opcode: number, payload: Buffer): Buffer {
  let head: Buffer;
  if (payload.length < 126) {
    head = Buffer.from([0x80 | opcode, payload.length]);
  } else if (payload.length < 0x10000) {
    head = Buffer.alloc(4);
    head[0] = 0x80 | opcode;
    head[1] = 126;
    head.writeUInt16BE(payload.length, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = 0x80 | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(payload.length), 2);
  }
  return Buffer.concat([head, payload]);
}

/** A channel-multiplexed WebSocket connection, after the 101. */
export class WebSocketChannels {
  private pending: Buffer = Buffer.alloc(0);
  private closeSent = false;

  constructor(
    private readonly socket: Duplex,
    private readonly base64: boolean,
    private readonly onClose: (reason: string) => void,
  ) {
    socket.on('data', (chunk: Buffer) => this.push(chunk));
    socket.on('close', () => this.onClose('the connection closed'));
    socket.on('error', () => this.onClose('socket error'));
  }

  /** Writes one message on a channel (skipped when empty: a process that printed nothing sends nothing). */
  send(channel: number, data: Buffer | string): void {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    if (bytes.length === 0 || !this.socket.writable) return;
    const frame = this.base64
      ? websocketFrame(OP_TEXT, Buffer.from(String.fromCharCode(0x30 + channel) + bytes.toString('base64')))
      : websocketFrame(OP_BINARY, Buffer.concat([Buffer.from([channel]), bytes]));
    this.socket.write(frame);
  }

  /** A normal closure (1000); the socket ends once the frame is written. */
  close(): void {
    if (this.closeSent) return;
    this.closeSent = true;
    if (this.socket.writable) this.socket.end(websocketFrame(OP_CLOSE, Buffer.from([0x03, 0xe8])));
  }

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    for (;;) {
      const read = readWebSocketFrame(this.pending);
      if (read === 'incomplete') return;
      if (read === 'too-large') {
        this.close();
        this.onClose('the client sent a WebSocket frame larger than 64 MiB');
        return;
      }
      this.pending = read.rest;
      const { frame } = read;
      if (frame.opcode === OP_PING && this.socket.writable && !this.closeSent) this.socket.write(websocketFrame(OP_PONG, frame.payload));
      else if (frame.opcode === OP_CLOSE) {
        this.close();
        this.onClose('the client closed the WebSocket');
        return;
      }
      // Data (stdin, resize, v5 close signals): the command has no use for it.
    }
  }
}
