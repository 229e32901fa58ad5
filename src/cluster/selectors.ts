/**
 * The selectors of src/model/selectors.ts as the embedded API server answers them: a selector that
 * does not parse is a 400 Bad Request with kube-apiserver's message.
 */
import * as model from '../model/selectors.js';
import { badRequest } from './api-error.js';

export {
  STANDARD_FIELDS,
  dns1123SubdomainErrors,
  labelKeyErrors,
  labelValueErrors,
  lengthAndPatternErrors,
  matchesFields,
  matchesLabels,
} from '../model/selectors.js';
export type { FieldGetter, FieldRequirement, LabelOperator, LabelRequirement } from '../model/selectors.js';

function asBadRequest<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof model.SelectorSyntaxError) throw badRequest(err.message);
    throw err;
  }
}

export function parseLabelSelector(text: string | null | undefined): model.LabelRequirement[] {
  return asBadRequest(() => model.parseLabelSelector(text));
}

export function parseFieldSelector(text: string | null | undefined, supported: readonly string[]): model.FieldRequirement[] {
  return asBadRequest(() => model.parseFieldSelector(text, supported));
}
