/**
 * Reading one WebSocket frame (RFC 6455 section 5.2) off the front of a buffer, for the two readers
 * kperturb has: the exec/attach channel server (src/streaming/websocket-channels.ts, client frames,
 * masked) and the proxy's observer of WebSocket watches (proxy/websocket-watch.ts, server frames).
 */

export interface WebSocketFrame {
  fin: boolean;
  /** Per-message compression (permessage-deflate) marks a message's first frame with RSV1. */
  rsv1: boolean;
  opcode: number;
  /** Unmasked. */
  payload: Buffer;
}

/** Neither reader expects a frame this large: past it a stream is treated as broken. */
export const MAX_WEBSOCKET_FRAME = 64 * 1024 * 1024;

/**
 * The frame at the start of `b` and the bytes after it; `incomplete` when `b` does not hold a whole
 * frame yet; `too-large` when the frame declares more than `MAX_WEBSOCKET_FRAME` bytes.
 */
export function readWebSocketFrame(b: Buffer): { frame: WebSocketFrame; rest: Buffer } | 'incomplete' | 'too-large' {
  if (b.length < 2) return 'incomplete';
  let length = b[1]! & 0x7f;
  let at = 2;
  if (length === 126) {
    if (b.length < 4) return 'incomplete';
    length = b.readUInt16BE(2);
    at = 4;
  } else if (length === 127) {
    if (b.length < 10) return 'incomplete';
    const big = b.readBigUInt64BE(2);
    if (big > BigInt(MAX_WEBSOCKET_FRAME)) return 'too-large';
    length = Number(big);
    at = 10;
  }
  const masked = (b[1]! & 0x80) !== 0;
  const maskAt = at;
  if (masked) at += 4;
  if (b.length < at + length) return 'incomplete';
  let payload = b.subarray(at, at + length);
  if (masked) {
    payload = Buffer.from(payload);
    for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ b[maskAt + (i % 4)]!;
  }
  return { frame: { fin: (b[0]! & 0x80) !== 0, rsv1: (b[0]! & 0x40) !== 0, opcode: b[0]! & 0x0f, payload }, rest: b.subarray(at + length) };
}
