/**
 * The HTTP stub application: answers every request from the application's rules (first match on
 * method and path glob), or its default answer (200 `{}` unless configured). For controllers that
 * call their application's HTTP API on pod IPs or Service names (Elasticsearch, NiFi, Cassandra
 * sidecars). Rules may also match a substring of the request body, and a state of their own: each
 * server (one per pod or Service address) starts in no state, and a rule's `setState` moves it on,
 * so that a stub can answer as the application would after an operation (a Cassandra node's
 * OperationMode is DECOMMISSIONED after its decommission call, until its pod stops). An
 * app-unavailable fault answers a call with an error status, or resets its connection, instead
 * (`hooks.arrived`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { answerHttp, type HttpStubConfig } from '../model/applications.js';

export interface HttpCall {
  method: string;
  path: string;
  /** The status answered, or `reset` when the connection was reset instead (an app-unavailable fault that refuses). */
  status: number | 'reset';
  rule?: number;
}

/** What a stub's fault (app-unavailable) does to a call: answer this status, or reset the connection. */
export type HttpFaultAnswer = number | 'reset';

export interface HttpStubHooks {
  /**
   * A request arrived, body read, not answered yet (call triggers fire here); returns the fault
   * answer it gets instead of the rules' (undefined: none).
   */
  arrived?(method: string, path: string): HttpFaultAnswer | undefined;
  /** The listener's state (rules' `state` / `setState`), kept by the caller so that it outlives a listener that is closed and opened again. */
  state?: { get(): string | undefined; set(state: string): void };
}

/** An HTTP server (not listening yet) answering from `config`; `onCall` hears every answered request. */
export function createHttpStub(config: HttpStubConfig, onCall: (call: HttpCall) => void, hooks: HttpStubHooks = {}): Server {
  let own: string | undefined;
  const state = hooks.state ?? { get: () => own, set: (s: string) => (own = s) };
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const fault = hooks.arrived?.(method, path);
      if (fault === 'reset') {
        req.socket.destroy();
        onCall({ method, path, status: 'reset' });
        return;
      }
      if (fault !== undefined) {
        // No rule runs: the application is down, its state does not move.
        const body = JSON.stringify({ error: 'service unavailable (kperturb app-unavailable fault)' });
        res.writeHead(fault, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
        res.end(method === 'HEAD' ? undefined : body);
        onCall({ method, path, status: fault });
        return;
      }
      const { answer, rule } = answerHttp(config, method, path, Buffer.concat(chunks).toString('utf8'), state.get());
      const setState = rule !== undefined ? config.rules[rule]!.setState : undefined;
      if (setState !== undefined) state.set(setState);
      const headers: Record<string, string> = {};
      let body = '';
      if (answer.text !== undefined) {
        headers['content-type'] = 'text/plain; charset=utf-8';
        body = answer.text;
      } else if (answer.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(answer.json);
      }
      for (const [k, v] of Object.entries(answer.headers)) headers[k.toLowerCase()] = v;
      headers['content-length'] = String(Buffer.byteLength(body));
      res.writeHead(answer.status, headers);
      res.end(method === 'HEAD' ? undefined : body);
      onCall({ method, path, status: answer.status, ...(rule !== undefined ? { rule } : {}) });
    });
  });
}
