/**
 * The WebSocket answer of an exec (src/streaming/remote-command.ts) waits after the 101, as a
 * kubelet's does while it starts the command: client-go 1.30-1.33's executor (kubectl 1.32 here)
 * discards messages that arrive before it has created its streams (kubernetes/kubernetes#131189),
 * and `kubectl exec` failed with "Unknown stream id 1, discarding message ... error: closed all
 * streams" in one CI run (test/cluster/exec.test.ts, a pod on a Ready node).
 */
import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { Duplex } from 'node:stream';
import { serveRemoteCommand, WEBSOCKET_ANSWER_DELAY_MS, type SessionReport } from '../../src/streaming/remote-command.js';

/** A socket that keeps what the server writes, with the time of each write. */
class RecordingSocket extends Duplex {
  readonly writes: Array<{ at: number; data: Buffer }> = [];
  override _read(): void {}
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.writes.push({ at: Date.now(), data: Buffer.from(chunk) });
    done();
  }
}

test('a WebSocket exec answer is written a while after the 101, never with it', async (t) => {
  const socket = new RecordingSocket();
  const req = {
    headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-protocol': 'v5.channel.k8s.io' },
  } as unknown as IncomingMessage;
  const start = Date.now();
  const reported = new Promise<SessionReport>((resolve) =>
    serveRemoteCommand(
      req,
      socket,
      Buffer.alloc(0),
      { stdin: false, stdout: true, stderr: true, tty: false },
      { command: ['rabbitmqctl', 'status'], exitCode: 0, stdout: 'ok\n', stderr: '' },
      resolve,
    ),
  );
  // Synchronously after the call: the 101 alone.
  t.is(socket.writes.length, 1);
  t.regex(socket.writes[0]!.data.toString(), /^HTTP\/1\.1 101 Switching Protocols/);
  t.like(await reported, { status: 101, transport: 'websocket', delivered: true });
  const frames = socket.writes.slice(1);
  t.true(frames.length >= 2, 'stdout, then the status on the error channel');
  // Channel bytes of the binary frames (FIN+binary, length, channel): stdout (1), then error (3).
  t.deepEqual(
    frames.filter((w) => w.data[0] === 0x82).map((w) => w.data[2]),
    [1, 3],
  );
  t.true(frames[0]!.at - start >= WEBSOCKET_ANSWER_DELAY_MS - 1, `first frame ${frames[0]!.at - start} ms after the 101`);
});
