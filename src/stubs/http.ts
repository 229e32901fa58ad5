/**
 * The HTTP stub application: answers every request from the application's rules (first match on
 * method and path glob), or its default answer (200 `{}` unless configured). For controllers that
 * call their application's HTTP API on pod IPs or Service names (Elasticsearch, NiFi, Cassandra
 * sidecars). Rules may also match a substring of the request body, and a state of their own: each
 * server (one per pod or Service address) starts in no state, and a rule's `setState` moves it on,
 * so that a stub can answer as the application would after an operation (a Cassandra node's
 * OperationMode is DECOMMISSIONED after its decommission call, until its pod stops).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { answerHttp, type HttpStubConfig } from '../model/applications.js';

export interface HttpCall {
  method: string;
  path: string;
  status: number;
  rule?: number;
}

/** An HTTP server (not listening yet) answering from `config`; `onCall` hears every answered request. */
export function createHttpStub(config: HttpStubConfig, onCall: (call: HttpCall) => void): Server {
  let state: string | undefined;
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const { answer, rule } = answerHttp(config, method, path, Buffer.concat(chunks).toString('utf8'), state);
      const setState = rule !== undefined ? config.rules[rule]!.setState : undefined;
      if (setState !== undefined) state = setState;
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
