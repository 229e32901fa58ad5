/**
 * hold-until (unobserved state), within the API contract: from the change `from` on, hold the
 * controller's watch events for `key`; when the cancelling change `until` has happened, end the
 * stream with an in-stream 410 Expired so the controller relists and never sees the intermediate
 * states.
 */
import { describeChange } from '../trigger.js';
import { declareFault, type FaultOf } from './declare.js';
import { changeTriggerField, keyField } from './fields.js';

export const holdUntil = declareFault({
  type: 'hold-until',
  description: "Unobserved state: hide the object's changes from `from` until `until`, then 410 Expired",
  fields: { key: keyField(), from: changeTriggerField(), until: changeTriggerField() },
  describe: (f) => `hold ${f.key} from ${describeChange(f.from)} until ${describeChange(f.until)}`,
});

export type HoldUntilFault = FaultOf<typeof holdUntil>;
