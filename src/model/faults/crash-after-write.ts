/**
 * crash-after-write (intermediate state): restart the controller right after one of its writes,
 * before it gets the answer.
 *
 *   - type: crash-after-write
 *     after: { verb: patch, key: Database/default/db1, subresource: status, occurrence: 1 }
 */
import { describeWrite } from '../trigger.js';
import { declareFault, type FaultOf } from './declare.js';
import { writeTriggerField } from './fields.js';

export const crashAfterWrite = declareFault({
  type: 'crash-after-write',
  description: 'Intermediate state: restart the controller right after one of its writes',
  fields: { after: writeTriggerField() },
  describe: (f) => `crash after the controller ${describeWrite(f.after)}`,
  restarts: true,
});

export type CrashAfterWriteFault = FaultOf<typeof crashAfterWrite>;
