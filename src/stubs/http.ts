/**
 * The HTTP stub application: answers every request from the application's rules (first match on
 * method and path glob), or its default answer (200 `{}` unless configured). For controllers that
 * call their application's HTTP API on pod IPs or Service names (Elasticsearch, NiFi, Cassandra
 * sidecars). Request bodies are read and dropped.
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
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const { answer, rule } = answerHttp(config, method, path);
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
