/**
 * Reading the watch events of a WebSocket watch (how Java clients such as fabric8 watch) while its
 * bytes are piped through unchanged: the API server sends each watch event as one WebSocket message
 * (text, or binary; base64 under the `base64.binary.k8s.io` subprotocol). This decoder only observes
 * the server-to-client direction, so the trace can record what the controller was shown. Compressed
 * messages (permessage-deflate, RSV1) are not decoded; they are still relayed.
 */

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
      const frame = this.nextFrame();
      if (!frame) break;
      const { fin, rsv1, opcode, payload } = frame;
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

  private nextFrame(): { fin: boolean; rsv1: boolean; opcode: number; payload: Buffer } | undefined {
    const b = this.buffer;
    if (b.length < 2) return undefined;
    const fin = (b[0]! & 0x80) !== 0;
    const rsv1 = (b[0]! & 0x40) !== 0;
    const opcode = b[0]! & 0x0f;
    const masked = (b[1]! & 0x80) !== 0;
    let len = b[1]! & 0x7f;
    let offset = 2;
    if (len === 126) {
      if (b.length < 4) return undefined;
      len = b.readUInt16BE(2);
      offset = 4;
    } else if (len === 127) {
      if (b.length < 10) return undefined;
      const big = b.readBigUInt64BE(2);
      if (big > BigInt(64 * 1024 * 1024)) {
        this.broken = true; // not something a watch sends; stop decoding, keep relaying
        return undefined;
      }
      len = Number(big);
      offset = 10;
    }
    const maskOffset = offset;
    if (masked) offset += 4;
    if (b.length < offset + len) return undefined;
    let payload = b.subarray(offset, offset + len);
    if (masked) {
      const key = b.subarray(maskOffset, maskOffset + 4);
      payload = Buffer.from(payload);
      for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ key[i % 4]!;
    }
    this.buffer = b.subarray(offset + len);
    return { fin, rsv1, opcode, payload };
  }
}
