import { ABSENT } from '../src/model/results.js';

/** A value as it reads in an alarm message. */
export function formatValue(value: unknown): string {
  if (value === ABSENT) return 'absent';
  if (value === undefined) return 'undefined';
  return JSON.stringify(value);
}

export function formatReferenceValues(values: readonly unknown[]): string {
  return values.length === 1 ? formatValue(values[0]) : `one of ${values.map(formatValue).join(', ')}`;
}
