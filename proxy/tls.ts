/**
 * The proxy's own certificate authority: a throw-away CA and a server certificate for 127.0.0.1
 * (IP SAN; `localhost` as a DNS SAN too), made in-process with @peculiar/x509 on Node's WebCrypto,
 * so no openssl binary is needed. ECDSA P-256 keys: generating them takes milliseconds, and Go,
 * Java, Python and Node TLS stacks all accept them. The controller's kubeconfig trusts the CA through
 * `certificate-authority-data`.
 */
import { webcrypto } from 'node:crypto';

export interface ProxyCertificates {
  /** PEM of the CA certificate (what the controller's kubeconfig trusts). */
  caPem: string;
  /** PEM of the server certificate, signed by the CA. */
  certPem: string;
  /** PEM (PKCS#8) of the server certificate's private key. */
  keyPem: string;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** Serial numbers must be positive and unique per CA; 16 random bytes with the top bit cleared. */
function serialNumber(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

export async function generateProxyCertificates(validDays = 30): Promise<ProxyCertificates> {
  // tsyringe (used by @peculiar/x509) needs the Reflect metadata polyfill loaded first.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Crypto);
  // Some clients reject certificates that are not valid yet by a few seconds of clock skew.
  const notBefore = new Date(Date.now() - 60 * 60 * 1000);
  const notAfter = new Date(Date.now() + validDays * 24 * 60 * 60 * 1000);

  const caKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'CN=kperturb proxy CA',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const serverKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const server = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: 'CN=127.0.0.1',
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingKey: caKeys.privateKey,
    publicKey: serverKeys.publicKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(
        [
          { type: 'ip', value: '127.0.0.1' },
          { type: 'dns', value: 'localhost' },
        ],
        false,
      ),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', serverKeys.privateKey);
  return {
    caPem: ca.toString('pem'),
    certPem: server.toString('pem'),
    keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'),
  };
}

let shared: Promise<ProxyCertificates> | undefined;

/**
 * One CA and server certificate per kperturb process, shared by every proxy it starts: loading the
 * X.509 library costs about half a second once, generating is then a few milliseconds, and a run
 * does not need a CA of its own (each proxy's kubeconfig is written per run anyway).
 */
export function sharedProxyCertificates(): Promise<ProxyCertificates> {
  shared ??= generateProxyCertificates().catch((err: unknown) => {
    shared = undefined;
    throw err;
  });
  return shared;
}
