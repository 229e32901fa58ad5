/**
 * Running the proxy on its own (`kperturb proxy`): in front of the cluster a kubeconfig names, writing
 * a kubeconfig for the controller (TLS with the proxy's own CA, HTTP/2 and HTTP/1.1), a controller
 * trace and, optionally, the cluster trace from the proxy's own watch of every resource. Useful to
 * record a controller by hand.
 */
import { X509Certificate } from 'node:crypto';
import type https from 'node:https';
import { KubeconfigError, SetupError } from '../src/model/errors.js';
import { TraceSequence, TraceWriter } from '../src/io/trace-io.js';
import type { TraceSink } from '../src/model/trace.js';
import { KubeClient } from '../src/kube/client.js';
import { writeKubeconfigFile } from '../src/kube/kubeconfig.js';
import { loadKubeconfig, type KubeconfigSource } from '../src/kube/kubeconfig-source.js';
import { useSecretHashKeyFile } from '../src/io/secret-hash-key.js';
import { ClusterRecorder } from '../src/recorder/cluster-recorder.js';
import { ControllerProxy, type ControllerProxyOptions } from './index.js';

export interface StandaloneProxyOptions {
  /** The kubeconfig (and context) of the cluster to forward to. */
  upstreamKubeconfig: KubeconfigSource;
  port?: number;
  /** Where to write the kubeconfig the controller should use. */
  kubeconfigOut?: string;
  /** Where to write the controller trace (JSON lines). */
  traceFile?: string;
  /** Where to write the cluster trace (the proxy's own watch of every resource). */
  clusterTraceFile?: string;
  /** Replace Secret values by a keyed hash in the traces (default true). */
  redactSecrets?: boolean;
  /** The key file of those hashes (made if missing; see secret-hash.ts); default a key of this process. */
  secretHashKeyFile?: string;
  /** Serve the controller over TLS with a CA the proxy makes (default true); false: plain HTTP/1.1. */
  tls?: boolean;
  log: (line: string) => void;
}

function pem(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((v) => pem(v) ?? '').join('\n');
  return undefined;
}

/**
 * Reads server, CA, token (incl. token files and exec plugins) and client cert/key of the source's
 * context (`--context`, else the current one), loaded by kubectl's rules (kubeconfig-source.ts).
 */
export async function upstreamFromKubeconfig(source: KubeconfigSource): Promise<Omit<ControllerProxyOptions, 'trace'>> {
  const kc = await loadKubeconfig(source);
  const file = source.label;
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new KubeconfigError(
      file,
      source.context !== undefined ? `contexts[${source.context}]` : 'current-context',
      `a ${source.context !== undefined ? '' : 'current '}context that names a cluster`,
    );
  // Over plain http:// there is nothing to verify (client-node insists on the flag for http servers,
  // which is why the embedded cluster's kubeconfig carries it); over https the proxy needs a CA.
  if (cluster.skipTLSVerify && !cluster.server.startsWith('http://')) {
    throw new KubeconfigError(file, `clusters[${cluster.name}]`, 'a cluster with a CA (insecure-skip-tls-verify is not supported by the proxy)');
  }
  const tls: https.RequestOptions = {};
  try {
    await kc.applyToHTTPSOptions(tls);
  } catch (err) {
    throw new SetupError(`${file}: could not obtain credentials for the current context: ${(err as Error).message}`);
  }
  const headers = (tls.headers ?? {}) as Record<string, unknown>;
  const authorization =
    typeof headers.Authorization === 'string' ? headers.Authorization : typeof headers.authorization === 'string' ? headers.authorization : undefined;
  const token = authorization?.match(/^Bearer\s+(.+)$/i)?.[1];
  const caPem = pem(tls.ca);
  const cert = pem(tls.cert);
  const key = pem(tls.key);
  // Node ignores a CA that is not a certificate (and then trusts the system CAs): check it here.
  if (caPem !== undefined)
    checkCertificates(caPem, file, `clusters[${cluster.name}].${cluster.caData ? 'certificate-authority-data' : 'certificate-authority'}`);
  // Exec plugins and token files hand out tokens that expire; client-node caches them until then.
  const user = kc.getCurrentUser();
  const refreshable = user?.exec !== undefined || user?.authProvider !== undefined || (user as { tokenFile?: string } | null)?.tokenFile !== undefined;
  const tokenProvider = async (): Promise<string | undefined> => {
    const fresh: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(fresh);
    const h = (fresh.headers ?? {}) as Record<string, unknown>;
    const a = typeof h.Authorization === 'string' ? h.Authorization : typeof h.authorization === 'string' ? h.authorization : undefined;
    return a?.match(/^Bearer\s+(.+)$/i)?.[1];
  };
  return {
    upstream: cluster.server,
    ...(caPem ? { upstreamCaPem: caPem } : {}),
    ...(token ? { upstreamToken: token } : {}),
    ...(token && refreshable ? { upstreamTokenProvider: tokenProvider } : {}),
    ...(cert ? { upstreamClientCertPem: cert } : {}),
    ...(key ? { upstreamClientKeyPem: key } : {}),
  };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Every certificate of a PEM bundle must parse; a bundle with none is refused too. */
function checkCertificates(bundle: string, file: string, at: string): void {
  const blocks = bundle.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new KubeconfigError(file, at, 'PEM CA certificates (found no -----BEGIN CERTIFICATE----- block)');
  blocks.forEach((block, i) => {
    try {
      new X509Certificate(block);
    } catch (err) {
      throw new KubeconfigError(file, at, `valid PEM CA certificates (certificate ${i + 1} of ${blocks.length} does not parse: ${(err as Error).message})`);
    }
  });
}

export async function runStandaloneProxy(
  opts: StandaloneProxyOptions,
): Promise<{ proxy: ControllerProxy; recorder?: ClusterRecorder; close(): Promise<void> }> {
  const upstream = await upstreamFromKubeconfig(opts.upstreamKubeconfig);
  if (opts.secretHashKeyFile) useSecretHashKeyFile(opts.secretHashKeyFile);
  const sequence = new TraceSequence();
  const redact = { redactSecrets: opts.redactSecrets ?? true };
  const writer = opts.traceFile ? new TraceWriter(opts.traceFile, 'controller', sequence, redact) : undefined;
  const clusterWriter = opts.clusterTraceFile ? new TraceWriter(opts.clusterTraceFile, 'cluster', sequence, redact) : undefined;
  const discard: TraceSink = { append: () => 0 };
  let client: KubeClient | undefined;
  let recorder: ClusterRecorder | undefined;
  let proxy: ControllerProxy;
  const closeTraces = async () => {
    await writer?.close();
    await clusterWriter?.close();
  };
  if (clusterWriter) {
    client = new KubeClient(upstream.upstream, {
      ...(upstream.upstreamCaPem ? { caPem: upstream.upstreamCaPem } : {}),
      ...(upstream.upstreamToken ? { token: upstream.upstreamToken } : {}),
      ...(upstream.upstreamClientCertPem ? { clientCertPem: upstream.upstreamClientCertPem } : {}),
      ...(upstream.upstreamClientKeyPem ? { clientKeyPem: upstream.upstreamClientKeyPem } : {}),
    });
    try {
      recorder = await ClusterRecorder.start(client, clusterWriter);
    } catch (err) {
      client.close();
      await closeTraces();
      throw new SetupError(`could not watch the cluster at ${upstream.upstream} for the cluster trace: ${(err as Error).message}`);
    }
  }
  try {
    proxy = await ControllerProxy.start({
      ...upstream,
      ...(opts.port !== undefined ? { port: opts.port } : {}),
      tls: opts.tls ?? true,
      trace: writer ?? discard,
      ...(recorder ? { clusterView: recorder } : {}),
      log: opts.log,
    });
  } catch (err) {
    await recorder?.stop();
    client?.close();
    await closeTraces();
    // A port in use is the caller's choice (kperturb proxy --port), which the caller names.
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw err;
    throw new SetupError(`could not start the proxy on port ${opts.port ?? 0}: ${(err as Error).message}`);
  }
  if (opts.kubeconfigOut) {
    try {
      writeKubeconfigFile(opts.kubeconfigOut, proxy.kubeconfigYaml());
    } catch (err) {
      await proxy.stop();
      await recorder?.stop();
      client?.close();
      await closeTraces();
      throw err;
    }
  }
  const where = [
    opts.kubeconfigOut ? `controller kubeconfig: ${opts.kubeconfigOut}` : '',
    opts.traceFile ? `trace: ${opts.traceFile}` : '',
    opts.clusterTraceFile ? `cluster trace: ${opts.clusterTraceFile}` : '',
    redact.redactSecrets ? '' : 'Secret values NOT redacted',
  ].filter(Boolean);
  opts.log(`proxy ${proxy.url} -> ${upstream.upstream}${where.length ? `; ${where.join('; ')}` : ''}`);
  return {
    proxy,
    ...(recorder ? { recorder } : {}),
    async close() {
      await proxy.stop();
      await recorder?.stop();
      client?.close();
      await closeTraces();
    },
  };
}
