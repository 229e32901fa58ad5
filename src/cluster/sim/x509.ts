/**
 * The certificates the simulated cert-manager writes: an ECDSA P-256 key and a v3 certificate
 * (subject CN and O, DNS subject alternative names, basicConstraints, keyUsage) signed with its own
 * key, as cert-manager's selfSigned issuer signs. Made with @peculiar/x509 on Node's WebCrypto, the
 * library the real control plane's credentials use (src/realcluster/pki.ts): node:crypto parses and
 * verifies certificates but cannot make one. What `X509Certificate` and openssl read back is the
 * check (test/cluster/sim/cert-manager.test.ts).
 */
import { createPrivateKey, webcrypto } from 'node:crypto';

export interface CertificateRequest {
  commonName?: string;
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  /** IP subject alternative names (kperturb's webhook serving certificate; the simulated cert-manager gives none). */
  ipAddresses?: readonly string[];
  isCA: boolean;
  notBefore: Date;
  notAfter: Date;
}

/** A key and its certificate, PEM-encoded as a kubernetes.io/tls Secret holds them. */
export interface IssuedCertificate {
  /** SEC1 "EC PRIVATE KEY", as cert-manager writes an ECDSA key with its default (PKCS#1-style) encoding. */
  keyPem: string;
  certPem: string;
}

export const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

type X509 = typeof import('@peculiar/x509');
let loaded: Promise<X509> | undefined;

/** @peculiar/x509, loaded once, on Node's WebCrypto. */
export function loadX509(): Promise<X509> {
  loaded ??= (async () => {
    // tsyringe (used by @peculiar/x509) needs the Reflect metadata polyfill loaded first.
    await import('reflect-metadata');
    const x509 = await import('@peculiar/x509');
    x509.cryptoProvider.set(webcrypto as unknown as Crypto);
    return x509;
  })();
  return loaded;
}

/** Serial numbers must be positive and unique per issuer: 16 random bytes, the top bit cleared. */
export function serialNumber(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

/** A new key and a certificate for it, signed with that key (self-signed, as cert-manager's selfSigned issuer signs). */
export async function issueCertificate(req: CertificateRequest): Promise<IssuedCertificate> {
  const x509 = await loadX509();
  const keys = (await webcrypto.subtle.generateKey(ECDSA_P256, true, ['sign', 'verify'])) as CryptoKeyPair;
  const name = [...(req.organizations ?? []).map((o) => ({ O: [o] })), ...(req.commonName ? [{ CN: [req.commonName] }] : [])];
  // digitalSignature, keyEncipherment (and keyCertSign for a CA), as cert-manager sets them
  const usages = x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment | (req.isCA ? x509.KeyUsageFlags.keyCertSign : 0);
  const extensions: InstanceType<X509['Extension']>[] = [
    new x509.KeyUsagesExtension(usages, true),
    new x509.BasicConstraintsExtension(req.isCA, undefined, true),
  ];
  const names = [
    ...(req.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(req.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name,
    notBefore: req.notBefore,
    notAfter: req.notAfter,
    keys,
    signingAlgorithm: ECDSA_P256,
    extensions,
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return {
    keyPem: createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ type: 'sec1', format: 'pem' }).toString(),
    certPem: cert.toString('pem'),
  };
}
