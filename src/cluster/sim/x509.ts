/**
 * Just enough X.509 to issue the certificates the simulated cert-manager writes: an ECDSA P-256 key
 * and a v3 certificate (subject CN and O, DNS subject alternative names, basicConstraints, keyUsage)
 * signed with its own key, as cert-manager's selfSigned issuer signs. node:crypto parses and verifies
 * certificates (`X509Certificate`) but cannot make one, so the DER is written here; what
 * `X509Certificate` and openssl read back is the check (test/cluster/sim/cert-manager.test.ts).
 */
import { generateKeyPair, randomBytes, sign, type KeyObject } from 'node:crypto';

export interface CertificateRequest {
  commonName?: string;
  organizations?: readonly string[];
  dnsNames?: readonly string[];
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

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
};

/** A new key and a certificate for it, signed with that key (self-signed, as cert-manager's selfSigned issuer signs). */
export async function issueCertificate(req: CertificateRequest): Promise<IssuedCertificate> {
  const { privateKey, publicKey } = await new Promise<{ privateKey: KeyObject; publicKey: KeyObject }>((resolve, reject) =>
    generateKeyPair('ec', { namedCurve: 'prime256v1' }, (err, publicKey, privateKey) => (err ? reject(err) : resolve({ publicKey, privateKey }))),
  );
  const subject = name(req);
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive and minimal
  const tbs = seq(
    tlv(0xa0, int(Buffer.from([2]))), // v3
    int(serial),
    algorithm,
    subject, // issuer: itself
    seq(time(req.notBefore), time(req.notAfter)),
    subject,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, seq(...extensions(req))),
  );
  const signature = sign('sha256', tbs, privateKey);
  const cert = seq(tbs, algorithm, bitString(signature));
  return {
    keyPem: privateKey.export({ type: 'sec1', format: 'pem' }).toString(),
    certPem: pem('CERTIFICATE', cert),
  };
}

function extensions(req: CertificateRequest): Buffer[] {
  // digitalSignature, keyEncipherment (and keyCertSign for a CA), as cert-manager sets them
  const usage = req.isCA ? 0xa4 : 0xa0;
  const out = [
    extension(OID.keyUsage, true, bitString(Buffer.from([usage]), trailingZeros(usage))),
    extension(OID.basicConstraints, true, req.isCA ? seq(tlv(0x01, Buffer.from([0xff]))) : seq()),
  ];
  const dns = req.dnsNames ?? [];
  if (dns.length > 0) out.push(extension(OID.subjectAltName, false, seq(...dns.map((d) => tlv(0x82, Buffer.from(d, 'ascii'))))));
  return out;
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
}

function name(req: CertificateRequest): Buffer {
  const rdns = (req.organizations ?? []).map((o) => attribute(OID.organization, o));
  if (req.commonName) rdns.push(attribute(OID.commonName, req.commonName));
  return seq(...rdns);
}

function attribute(id: string, value: string): Buffer {
  return tlv(0x31, seq(oid(id), tlv(0x0c, Buffer.from(value, 'utf8'))));
}

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
}

function seq(...parts: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(parts));
}

function int(value: Buffer): Buffer {
  return tlv(0x02, value[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value);
}

function bitString(value: Buffer, unusedBits = 0): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), value]));
}

function trailingZeros(byte: number): number {
  let n = 0;
  while (n < 8 && !(byte & (1 << n))) n++;
  return n;
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [40 * a + b];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift((v & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 4.1.2.5), to the second. */
function time(at: Date): Buffer {
  const iso = at.toISOString(); // 2026-11-29T17:03:42.123Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '') + 'Z';
  return at.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii')) : tlv(0x18, Buffer.from(digits, 'ascii'));
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
