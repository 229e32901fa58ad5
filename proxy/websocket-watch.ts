/**
 * Reading the watch events of a WebSocket watch (how Java clients such as fabric8 watch) while its
 * bytes are piped through unchanged: the API server sends each watch event as one WebSocket message
 * (text, or binary; base64 under the `base64.binary.k8s.io` subprotocol). This decoder only observes
 * the server-to-client direction, so the trace can record what the controller was shown. Compressed
 * messages (permessage-deflate, RSV1) are not decoded; they are still relayed.
 */
import { readWebSocketFrame } from '../src/streaming/websocket-frame.js';

export class WebSocketMessageReader {
  private buffer: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentedOpcode = 0;
  private compressed = false;
  private broken = false;

  constructor(private readonly base64: boolean) {}

  /** Complete data messages in `chunk` (joined to what came before), decoded to their payload text. */
  push(chunk: Buffer): string[] {
    if (this.broken) return [];
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const out: string[] = [];
    for (;;) {
      const read = readWebSocketFrame(this.buffer);
      if (read === 'incomplete') break;
      if (read === 'too-large') {
        this.broken = true; // not something a watch sends; stop decoding, keep relaying
        break;
      }
      this.buffer = read.rest;
      const { fin, rsv1, opcode, payload } = read.frame;
      if (opcode >= 8) continue; // close, ping, pong
      if (opcode !== 0) {
        this.fragmentedOpcode = opcode;
        this.compressed = rsv1;
        this.fragments = [];
      }
      this.fragments.push(payload);
      if (!fin) continue;
      const message = Buffer.concat(this.fragments);
      this.fragments = [];
      if (this.compressed || (this.fragmentedOpcode !== 1 && this.fragmentedOpcode !== 2)) continue;
      const text = this.base64 ? Buffer.from(message.toString('latin1'), 'base64').toString('utf8') : message.toString('utf8');
      out.push(text);
    }
    return out;
  }
}
