/**
 * cert-manager (github.com/cert-manager/cert-manager), the part operators depend on: once the cluster
 * serves its cert-manager.io kinds (its CRDs were applied, as installing cert-manager applies them),
 * - an Issuer or ClusterIssuer with `spec.selfSigned` gets the Ready condition (True, IsReady), as
 *   cert-manager's issuers controller sets it; an issuer of another type is left without status (not
 *   simulated, so its Certificates are never issued);
 * - a Certificate whose issuerRef (kind Issuer in its namespace, or ClusterIssuer; group
 *   cert-manager.io) names a ready issuer gets its Secret `spec.secretName`: type kubernetes.io/tls
 *   with tls.key, tls.crt and ca.crt (a real ECDSA P-256 key and a self-signed certificate for
 *   spec.commonName, spec.organization / spec.subject.organizations and spec.dnsNames; ca.crt is the
 *   certificate itself, as the selfSigned issuer writes it) and cert-manager's annotations
 *   (cert-manager.io/certificate-name, issuer-name, issuer-kind, common-name, alt-names, ip-sans,
 *   uri-sans); then its status: the Ready condition (True, Ready, "Certificate is up to date and has
 *   not expired") and notAfter. A Secret that is deleted, or whose annotations no longer match the
 *   Certificate's spec, is issued again, as cert-manager re-issues.
 * Not simulated: CertificateRequests and Orders (the Secret is written directly), issuer types other
 * than selfSigned, renewal, key algorithms other than ECDSA P-256 (cert-manager's default is RSA
 * 2048), IP and URI SANs, Events, the webhook and cainjector. The fields read are those of every
 * cert-manager.io version (v1alpha2 to v1), so the CRDs may serve any of them.
 */
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import { X509Certificate } from 'node:crypto';
import { clone, condition, conditions, isBeingDeleted, setCondition, spec, status, str, type Condition } from './objects.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';
import { issueCertificate } from './x509.js';

export const CERT_MANAGER_GROUP = 'cert-manager.io';
const FOLLOWED_KINDS = ['Issuer', 'ClusterIssuer', 'Certificate'] as const;
type FollowedKind = (typeof FOLLOWED_KINDS)[number];
/** cert-manager's default Certificate duration (spec.duration unset): 90 days. */
const DEFAULT_DURATION_MS = 90 * 24 * 3600 * 1000;
const ANNOTATION = 'cert-manager.io/';

export class CertManagerController {
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private readonly informers = new Map<FollowedKind, Informer>();
  private secrets: Informer | undefined;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly crds: Informer,
  ) {
    this.enqueue = runner.register('cert-manager', (key) => this.sync(key));
  }

  /** Follows the CustomResourceDefinitions; does nothing until cert-manager's kinds are served. */
  static async start(ctx: SimContext, runner: WorkRunner): Promise<CertManagerController | undefined> {
    const crds = await ctx.informers.forKind('CustomResourceDefinition', 'apiextensions.k8s.io/v1');
    if (!crds) return undefined;
    const c = new CertManagerController(ctx, runner, crds);
    crds.subscribe((_type, crd) => {
      if (spec(crd).group === CERT_MANAGER_GROUP) c.enqueue('follow');
    });
    return c;
  }

  private sync(key: string): Promise<void> {
    if (key === 'follow') return this.follow();
    const [kind, namespace, name] = key.split('|') as [FollowedKind, string, string];
    if (kind === 'Certificate') return this.syncCertificate(namespace, name);
    return this.syncIssuer(kind, namespace, name);
  }

  /** Starts an informer for each cert-manager kind whose CRD is established and not followed yet. */
  private async follow(): Promise<void> {
    for (const kind of FOLLOWED_KINDS) {
      if (this.informers.has(kind) && !this.informers.get(kind)!.gone) continue;
      const version = establishedVersion(this.crds.list(), kind);
      if (!version) continue;
      const informer = await this.ctx.informers.forKind(kind, `${CERT_MANAGER_GROUP}/${version}`);
      if (!informer) throw new Error(`${kind} ${CERT_MANAGER_GROUP}/${version} is established but not served yet`); // retried
      if (kind === 'Certificate') this.secrets ??= await this.ctx.informers.forKind('Secret', 'v1');
      this.informers.set(kind, informer);
      informer.subscribe((_type, obj) => {
        this.enqueue(`${kind}|${obj.metadata?.namespace ?? ''}|${obj.metadata!.name!}`);
        if (kind !== 'Certificate') for (const cert of this.certificatesOf(kind, obj)) this.enqueue(cert);
      });
      if (kind === 'Certificate')
        this.secrets?.onChange((_type, secret) => {
          for (const cert of informer.list(secret.metadata?.namespace))
            if (spec(cert).secretName === secret.metadata?.name) this.enqueue(`Certificate|${cert.metadata!.namespace}|${cert.metadata!.name}`);
        });
    }
  }

  private certificatesOf(kind: FollowedKind, issuer: KubeObject): string[] {
    const certs = this.informers.get('Certificate');
    if (!certs) return [];
    return certs
      .list(kind === 'Issuer' ? issuer.metadata?.namespace : undefined)
      .filter((c) => {
        const ref = issuerRef(c);
        return ref?.kind === kind && ref.name === issuer.metadata?.name;
      })
      .map((c) => `Certificate|${c.metadata!.namespace}|${c.metadata!.name}`);
  }

  private async syncIssuer(kind: FollowedKind, namespace: string, name: string): Promise<void> {
    const informer = this.informers.get(kind)!;
    const issuer = informer.get(namespace || undefined, name);
    if (!issuer || isBeingDeleted(issuer) || !isObject(spec(issuer).selfSigned)) return;
    await this.setStatus(informer, issuer, { type: 'Ready', status: 'True', reason: 'IsReady' });
  }

  private async syncCertificate(namespace: string, name: string): Promise<void> {
    const certs = this.informers.get('Certificate')!;
    const cert = certs.get(namespace, name);
    const secrets = this.secrets;
    if (!cert || isBeingDeleted(cert) || !secrets) return;
    const ref = issuerRef(cert);
    const secretName = str(spec(cert).secretName);
    if (!ref || !secretName) return;
    const issuers = this.informers.get(ref.kind);
    const issuer = issuers?.get(ref.kind === 'Issuer' ? namespace : undefined, ref.name);
    if (!issuer || condition(issuer, 'Ready')?.status !== 'True') return; // re-queued when the issuer changes
    const wanted = secretAnnotations(cert, ref);
    let secret = secrets.get(namespace, secretName);
    const annotations = secret?.metadata?.annotations ?? {};
    let notAfter = secret && Object.entries(wanted).every(([k, v]) => annotations[k] === v) ? certificateNotAfter(secret) : undefined;
    if (!secret || !notAfter) {
      secret = await this.issue(cert, secret, wanted);
      notAfter = certificateNotAfter(secret);
    }
    const ready: Condition = { type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired' };
    await this.setStatus(certs, cert, ready, notAfter ? { notAfter } : {});
  }

  /** Writes the Secret of a freshly issued key and certificate (creates it, or replaces the data of the one there). */
  private async issue(cert: KubeObject, existing: KubeObject | undefined, annotations: Record<string, string>): Promise<KubeObject> {
    const s = spec(cert);
    const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000);
    const notAfter = new Date(notBefore.getTime() + (parseDuration(s.duration) ?? DEFAULT_DURATION_MS));
    const subject = isObject(s.subject) ? s.subject : {};
    const issued = await issueCertificate({
      ...(str(s.commonName) ? { commonName: str(s.commonName) } : {}),
      organizations: strings(s.organization ?? subject.organizations),
      dnsNames: strings(s.dnsNames),
      isCA: s.isCA === true,
      notBefore,
      notAfter,
    });
    const data = {
      'ca.crt': Buffer.from(issued.certPem).toString('base64'),
      'tls.crt': Buffer.from(issued.certPem).toString('base64'),
      'tls.key': Buffer.from(issued.keyPem).toString('base64'),
    };
    const namespace = cert.metadata!.namespace!;
    const info = this.secrets!.info;
    let written: KubeObject;
    if (existing) {
      const next = clone(existing);
      next.metadata = { ...next.metadata, annotations: { ...next.metadata?.annotations, ...annotations } };
      written = await this.ctx.api.update(info, { ...next, type: 'kubernetes.io/tls', data: { ...(isObject(next.data) ? next.data : {}), ...data } });
    } else {
      const metadata = { name: str(s.secretName), namespace, annotations };
      written = await this.ctx.api.create(info, namespace, { metadata, type: 'kubernetes.io/tls', data });
    }
    await this.secrets!.waitForWrite(written);
    return written;
  }

  /** Sets one condition (and status fields) through the status subresource, if they differ. */
  private async setStatus(informer: Informer, obj: KubeObject, next: Condition, fields: Record<string, string> = {}): Promise<void> {
    const updated = clone(obj);
    updated.status = { ...status(obj), conditions: setCondition(conditions(obj), next), ...fields };
    const current = condition(obj, next.type);
    const same = current?.status === next.status && current.reason === next.reason && current.message === next.message;
    if (same && Object.entries(fields).every(([k, v]) => status(obj)[k] === v)) return;
    try {
      const written = await this.ctx.api.update(informer.info, updated, informer.info.subresources.includes('status') ? 'status' : undefined);
      await informer.waitForWrite(written);
    } catch (err) {
      if (!isStatus(err, 404)) throw err; // 409: retried with the newer object
    }
  }
}

/** notAfter of the certificate in a Secret's tls.crt, as cert-manager reads it (RFC 3339, seconds); undefined if it holds none. */
function certificateNotAfter(secret: KubeObject): string | undefined {
  const crt = isObject(secret.data) ? secret.data['tls.crt'] : undefined;
  if (typeof crt !== 'string') return undefined;
  try {
    return new Date(new X509Certificate(Buffer.from(crt, 'base64')).validTo).toISOString().replace(/\.\d+Z$/, 'Z');
  } catch {
    return undefined; // not a certificate: issued anew
  }
}

/** The version the CRD of a cert-manager kind stores, once the CRD is Established (undefined before). */
function establishedVersion(crds: KubeObject[], kind: string): string | undefined {
  const crd = crds.find((c) => spec(c).group === CERT_MANAGER_GROUP && isObject(spec(c).names) && (spec(c).names as Record<string, unknown>).kind === kind);
  if (!crd || isBeingDeleted(crd) || condition(crd, 'Established')?.status !== 'True') return undefined;
  const versions = Array.isArray(spec(crd).versions) ? (spec(crd).versions as unknown[]).filter(isObject) : [];
  const served = versions.filter((v) => v.served === true);
  return str((served.find((v) => v.storage === true) ?? served[0])?.name) || undefined;
}

function issuerRef(cert: KubeObject): { kind: 'Issuer' | 'ClusterIssuer'; name: string } | undefined {
  const ref = spec(cert).issuerRef;
  if (!isObject(ref) || !str(ref.name)) return undefined;
  if (str(ref.group, CERT_MANAGER_GROUP) !== CERT_MANAGER_GROUP) return undefined; // an external issuer's
  const kind = str(ref.kind, 'Issuer');
  return kind === 'Issuer' || kind === 'ClusterIssuer' ? { kind, name: str(ref.name) } : undefined;
}

/** The annotations cert-manager puts on a Certificate's Secret (pkg/apis/certmanager: the *AnnotationKey constants). */
function secretAnnotations(cert: KubeObject, ref: { kind: string; name: string }): Record<string, string> {
  const s = spec(cert);
  return {
    [`${ANNOTATION}alt-names`]: strings(s.dnsNames).join(','),
    [`${ANNOTATION}certificate-name`]: cert.metadata!.name!,
    [`${ANNOTATION}common-name`]: str(s.commonName),
    [`${ANNOTATION}ip-sans`]: strings(s.ipAddresses).join(','),
    [`${ANNOTATION}issuer-kind`]: ref.kind,
    [`${ANNOTATION}issuer-name`]: ref.name,
    [`${ANNOTATION}uri-sans`]: strings(s.uris ?? s.uriSANs).join(','),
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** A Go duration as cert-manager's spec.duration holds it ("2160h", "90m", "1h30m"); undefined if absent or unreadable. */
function parseDuration(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^(\d+(\.\d+)?(h|m|s|ms))+$/.test(value)) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let ms = 0;
  for (const [, n, , u] of value.matchAll(/(\d+(\.\d+)?)(ms|h|m|s)/g)) ms += Number(n) * unit[u!]!;
  return ms;
}
