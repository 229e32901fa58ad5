/**
 * The serving certificate of the controller's admission webhook server (kperturb.yaml's
 * controller.webhookServer), as cert-manager would put it in the operator's pod: a new ECDSA key and
 * a self-signed certificate for 127.0.0.1 and localhost, written as tls.crt and tls.key where the
 * controller reads them. By default that is controller-runtime's own default,
 * `$TMPDIR/k8s-webhook-server/serving-certs`, with TMPDIR a folder of the run, so that runs at the
 * same time never share one; the embedded cluster trusts the certificate when it calls the server.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { issueCertificate } from '../cluster/sim/x509.js';
import type { WebhookServer } from '../cluster/admission-webhooks.js';
import type { ControllerUnderTest } from '../config/config.js';
import { writePrivateFile } from '../io/private-file.js';

/** controller-runtime's webhook.Server CertDir default, under os.TempDir(). */
export const CONTROLLER_RUNTIME_CERT_DIR = join('k8s-webhook-server', 'serving-certs');
/** The run's TMPDIR for the controller, inside its run directory. */
export const CONTROLLER_TMP_DIR = 'controller-tmp';

export interface WebhookCertificate {
  server: WebhookServer;
  /** Environment the controller gets (TMPDIR, unless certDir is given). */
  env: Record<string, string>;
}

export async function writeWebhookCertificate(config: ControllerUnderTest, runDir: string): Promise<WebhookCertificate | undefined> {
  const hook = config.controller.webhookServer;
  if (!hook) return undefined;
  const now = Date.now();
  const cert = await issueCertificate({
    commonName: `${config.name}-webhook`,
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    isCA: false,
    notBefore: new Date(now - 3_600_000),
    notAfter: new Date(now + 30 * 24 * 3_600_000),
  });
  const tmp = join(runDir, CONTROLLER_TMP_DIR);
  const certDir = hook.certDir ?? join(tmp, CONTROLLER_RUNTIME_CERT_DIR);
  mkdirSync(certDir, { recursive: true });
  writePrivateFile(join(certDir, 'tls.crt'), cert.certPem);
  writePrivateFile(join(certDir, 'tls.key'), cert.keyPem);
  return { server: { port: hook.port, caPem: cert.certPem }, env: hook.certDir ? {} : { TMPDIR: tmp } };
}
