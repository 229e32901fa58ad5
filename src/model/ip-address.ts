/**
 * Whether a string is an IPv4 or IPv6 address, as Node's net.isIP says, without importing node:net:
 * the oracles that use it are pure (no sockets), and the WHATWG URL parser every JavaScript runtime
 * has reads IPv6 exactly. A zone index (`fe80::1%eth0`), which net.isIP takes, is refused here, as
 * Kubernetes' own parsing (k8s.io/utils/net) refuses it in an API field.
 */
/** The WHATWG URL parser (a global of every JavaScript runtime; the core compiles without DOM or Node types). */
declare const URL: new (url: string) => { hostname: string };

const IPV4_OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${IPV4_OCTET}(\\.${IPV4_OCTET}){3}$`);

export function isIpAddress(text: string): boolean {
  if (IPV4.test(text)) return true;
  if (!text.includes(':') || /[^0-9A-Fa-f:.]/.test(text)) return false;
  try {
    return new URL(`http://[${text}]/`).hostname !== '';
  } catch {
    return false;
  }
}
