/**
 * The throw-away credentials of one real control plane: a CA, kube-apiserver's serving certificate
 * (IP SAN 127.0.0.1, plus the in-cluster names of the `kubernetes` Service so that the certificate is
 * the one a real cluster would have), the service-account signing key pair and the admin bearer token.
 * Made in-process with @peculiar/x509 on Node's WebCrypto (no openssl binary; loaded as the simulated
 * cert-manager loads it, src/cluster/sim/x509.ts). ECDSA P-256 keys:
 * generated in milliseconds and accepted by Go's TLS stack and kube-apiserver's key loaders.
 */
import { generateKeyPairSync, randomBytes, webcrypto } from 'node:crypto';
import { ECDSA_P256 as ALGORITHM, loadX509, serialNumber } from '../cluster/sim/x509.js';

export interface ControlPlaneCredentials {
  /** PEM of the CA that signed the serving certificate (clients trust it). */
  caPem: string;
  /** PEM (PKCS#8) of the CA's key: kube-controller-manager signs CertificateSigningRequests with it. */
  caKeyPem: string;
  servingCertPem: string;
  servingKeyPem: string;
  /** The service-account token signing key (PKCS#8) and its public half (SPKI). */
  serviceAccountKeyPem: string;
  serviceAccountPublicKeyPem: string;
  /** Bearer token of the admin user (group system:masters). */
  adminToken: string;
}

export const ADMIN_USER = 'kperturb-admin';

/**
 * @param serviceIp the first address of the service CIDR: the ClusterIP of `default/kubernetes`.
 */
export async function generateControlPlaneCredentials(serviceIp: string, validDays = 30): Promise<ControlPlaneCredentials> {
  const x509 = await loadX509();
  // Clients reject certificates that are not valid yet by a few seconds of clock skew.
  const notBefore = new Date(Date.now() - 60 * 60 * 1000);
  const notAfter = new Date(Date.now() + validDays * 24 * 60 * 60 * 1000);
  const exportKey = async (key: CryptoKey) => x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');

  const caKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'CN=kperturb real control plane CA',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const servingKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const serving = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: 'CN=kube-apiserver',
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingKey: caKeys.privateKey,
    publicKey: servingKeys.publicKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(
        [
          { type: 'ip', value: '127.0.0.1' },
          { type: 'ip', value: serviceIp },
          { type: 'dns', value: 'localhost' },
          { type: 'dns', value: 'kubernetes' },
          { type: 'dns', value: 'kubernetes.default' },
          { type: 'dns', value: 'kubernetes.default.svc' },
          { type: 'dns', value: 'kubernetes.default.svc.cluster.local' },
        ],
        false,
      ),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const sa = generateKeyPairSync('ec', {
    namedCurve: 'prime256v1',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });

  return {
    caPem: ca.toString('pem'),
    caKeyPem: await exportKey(caKeys.privateKey),
    servingCertPem: serving.toString('pem'),
    servingKeyPem: await exportKey(servingKeys.privateKey),
    serviceAccountKeyPem: sa.privateKey,
    serviceAccountPublicKeyPem: sa.publicKey,
    adminToken: randomBytes(24).toString('base64url'),
  };
}
