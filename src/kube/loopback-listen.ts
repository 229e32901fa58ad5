/**
 * Every server kperturb starts (the embedded API server, the proxy and its doors) binds 127.0.0.1
 * only: nothing it serves is meant for another machine.
 */
import type { AddressInfo, Server } from 'node:net';

/** Listens on 127.0.0.1 (`port` 0: any free one) and resolves with the port, or rejects with the listen error. */
export function listenOnLoopback(server: Server, port = 0): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
