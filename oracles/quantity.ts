/**
 * Kubernetes resource quantities ("1Gi", "500m", "1e3", "0.5"), compared by value: the API server
 * and controllers write the same amount in different forms ("1Gi" and "1073741824", "500m" and
 * "0.5"), and Kubernetes treats them as equal. Values are kept exact (BigInt), never as floats.
 */

/** value = mantissa × 10^exp10 × 2^exp2 */
interface Quantity {
  mantissa: bigint;
  exp10: number;
  exp2: number;
  /** Written with a unit suffix or an exponent (as opposed to a plain number). */
  suffixed: boolean;
}

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d{1,3})?$/;

export function parseQuantity(text: string): Quantity | undefined {
  const m = QUANTITY.exec(text);
  if (!m) return undefined;
  const [, sign, number, suffix = ''] = m;
  const [whole = '', fraction = ''] = number!.split('.');
  let mantissa = BigInt((whole || '0') + fraction);
  if (sign === '-') mantissa = -mantissa;
  let exp10 = -fraction.length;
  let exp2 = 0;
  if (suffix in BINARY) exp2 = BINARY[suffix]!;
  else if (suffix in DECIMAL) exp10 += DECIMAL[suffix]!;
  else exp10 += Number(suffix.slice(1));
  return { mantissa, exp10, exp2, suffixed: suffix !== '' };
}

function quantityOf(value: unknown): Quantity | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? parseQuantity(String(value)) : undefined;
  return typeof value === 'string' ? parseQuantity(value) : undefined;
}

function scaled(q: Quantity, exp10: number, exp2: number): bigint {
  return q.mantissa * 10n ** BigInt(q.exp10 - exp10) * 2n ** BigInt(q.exp2 - exp2);
}

/**
 * Equal amounts written differently. To keep ordinary strings apart ("10" and "10.0" in a ConfigMap
 * are different strings), two strings count as quantities only when one has a unit or an exponent;
 * a number and a numeric string ("1" and 1) always do.
 */
export function quantitiesEqual(a: unknown, b: unknown): boolean {
  if (typeof a === typeof b && typeof a !== 'string') return false;
  const qa = quantityOf(a);
  const qb = quantityOf(b);
  if (!qa || !qb) return false;
  if (typeof a === 'string' && typeof b === 'string' && !qa.suffixed && !qb.suffixed) return false;
  const exp10 = Math.min(qa.exp10, qb.exp10);
  const exp2 = Math.min(qa.exp2, qb.exp2);
  return scaled(qa, exp10, exp2) === scaled(qb, exp10, exp2);
}
