/**
 * metav1.LabelSelector ({matchLabels, matchExpressions}) as Kubernetes evaluates it: what a workload,
 * PodDisruptionBudget or Service selects. Shared by the embedded API server (validation, eviction,
 * scale) and anything simulating controllers.
 */
import { isObject } from './object-key.js';

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** Narrows an unknown value to a LabelSelector (shape only; values are not validated). */
export function asLabelSelector(value: unknown): LabelSelector | undefined {
  if (!isObject(value)) return undefined;
  return value as LabelSelector;
}

/**
 * Whether `labels` match. An empty selector matches everything; a missing (undefined) one matches
 * nothing, as `metav1.LabelSelectorAsSelector(nil)` returns labels.Nothing().
 */
export function matchesLabelSelector(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!selector) return false;
  const ls = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (ls[k] !== v) return false;
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(ls, req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!has || !values.includes(ls[req.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(ls[req.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** The selector in `labelSelector=` string form (`app=web,tier in (a,b)`), as the scale subresource reports it. */
export function formatLabelSelector(selector: LabelSelector | undefined): string {
  if (!selector) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) parts.push(`${k}=${v}`);
  for (const req of selector.matchExpressions ?? []) {
    const values = [...(req.values ?? [])].sort();
    switch (req.operator) {
      case 'In':
        parts.push(`${req.key} in (${values.join(',')})`);
        break;
      case 'NotIn':
        parts.push(`${req.key} notin (${values.join(',')})`);
        break;
      case 'Exists':
        parts.push(req.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${req.key}`);
        break;
    }
  }
  return parts.join(',');
}
