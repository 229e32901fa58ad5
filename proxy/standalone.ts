/**
 * Running the proxy on its own (`kperturb proxy`): in front of the cluster a kubeconfig names, writing
 * a kubeconfig for the controller and a controller trace. Useful to record a controller by hand.
 */
import { writeFileSync } from 'node:fs';
import type https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { SetupError, UserInputError } from '../src/model/errors.js';
import { TraceSequence, TraceWriter } from '../src/model/trace-io.js';
import type { TraceSink } from '../src/model/trace.js';
import { ControllerProxy, type ControllerProxyOptions } from './index.js';

export interface StandaloneProxyOptions {
  /** Path of the kubeconfig of the real cluster (its current context is used). */
  upstreamKubeconfig: string;
  port?: number;
  /** Where to write the kubeconfig the controller should use. */
  kubeconfigOut?: string;
  /** Where to write the controller trace (JSON lines). */
  traceFile?: string;
  log: (line: string) => void;
}

function pem(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((v) => pem(v) ?? '').join('\n');
  return undefined;
}

/** Reads server, CA, token (incl. token files and exec plugins) and client cert/key of the current context. */
export async function upstreamFromKubeconfig(file: string): Promise<Omit<ControllerProxyOptions, 'trace'>> {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(file);
  } catch (err) {
    throw new UserInputError(file, undefined, `a readable kubeconfig (${(err as Error).message})`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new UserInputError(file, 'current-context', 'a current context that names a cluster');
  // Over plain http:// there is nothing to verify (client-node insists on the flag for http servers,
  // which is why the embedded cluster's kubeconfig carries it); over https the proxy needs a CA.
  if (cluster.skipTLSVerify && !cluster.server.startsWith('http://')) {
    throw new UserInputError(file, `clusters[${cluster.name}]`, 'a cluster with a CA (insecure-skip-tls-verify is not supported by the proxy)');
  }
  const tls: https.RequestOptions = {};
  try {
    await kc.applyToHTTPSOptions(tls);
  } catch (err) {
    throw new SetupError(`${file}: could not obtain credentials for the current context: ${(err as Error).message}`);
  }
  const headers = (tls.headers ?? {}) as Record<string, unknown>;
  const authorization = typeof headers.Authorization === 'string' ? headers.Authorization : typeof headers.authorization === 'string' ? headers.authorization : undefined;
  const token = authorization?.match(/^Bearer\s+(.+)$/i)?.[1];
  const caPem = pem(tls.ca);
  const cert = pem(tls.cert);
  const key = pem(tls.key);
  return {
    upstream: cluster.server,
    ...(caPem ? { upstreamCaPem: caPem } : {}),
    ...(token ? { upstreamToken: token } : {}),
    ...(cert ? { upstreamClientCertPem: cert } : {}),
    ...(key ? { upstreamClientKeyPem: key } : {}),
  };
}

export async function runStandaloneProxy(opts: StandaloneProxyOptions): Promise<{ proxy: ControllerProxy; close(): Promise<void> }> {
  const upstream = await upstreamFromKubeconfig(opts.upstreamKubeconfig);
  const writer = opts.traceFile ? new TraceWriter(opts.traceFile, 'controller', new TraceSequence()) : undefined;
  const discard: TraceSink = { append: () => 0 };
  let proxy: ControllerProxy;
  try {
    proxy = await ControllerProxy.start({ ...upstream, ...(opts.port !== undefined ? { port: opts.port } : {}), trace: writer ?? discard, log: opts.log });
  } catch (err) {
    await writer?.close();
    throw new SetupError(`could not start the proxy on port ${opts.port ?? 0}: ${(err as Error).message}`);
  }
  if (opts.kubeconfigOut) writeFileSync(opts.kubeconfigOut, proxy.kubeconfigYaml(), { mode: 0o600 });
  opts.log(`proxy ${proxy.url} -> ${upstream.upstream}${opts.kubeconfigOut ? `; controller kubeconfig: ${opts.kubeconfigOut}` : ''}${opts.traceFile ? `; trace: ${opts.traceFile}` : ''}`);
  return {
    proxy,
    async close() {
      await proxy.stop();
      await writer?.close();
    },
  };
}
