/**
 * A run that waits for a fixed port another run holds counts the wait as its own phase, `portWait`
 * (RunRecord.phasesMs), not as starting the proxy: a campaign beside another campaign of an operator
 * with the same port spends its time there, idle (cassandra-operator beside casskop, both :8383:
 * 3,473 of its plans' 4,393 s were this wait, booked to `proxy`).
 */
import test from 'ava';
import { join } from 'node:path';
import { executeRun } from '../../src/coordinator/run.js';
import { lockPorts } from '../../src/coordinator/port-locks.js';
import { mirrorFollowOnce } from '../proxy/helpers.js';
import { freePort } from '../_free-port.js';

test('the time a run waits for a port another run holds is its portWait phase', async (t) => {
  const { config: base, workload, dir } = mirrorFollowOnce(t);
  const port = await freePort();
  const config = { ...base, controller: { ...base.controller, ports: [port] } };
  // Another run holds the port (the machine-wide lock directory, as every kperturb on it uses).
  const release = await lockPorts([port]);
  let waitedFrom: number | undefined;
  let releasedAt: number | undefined;
  const run = executeRun({
    config,
    workload,
    runDir: join(dir, 'run'),
    log: (line) => {
      if (waitedFrom === undefined && line.includes(`waiting for port ${port}`)) {
        waitedFrom = Date.now();
        // Released once the run says it waits: the wait it books is at least the time until then.
        setImmediate(() => {
          releasedAt = Date.now();
          void release();
        });
      }
    },
  });
  const { record } = await run;
  t.is(record.error, undefined);
  t.truthy(waitedFrom, 'the run said it waited for the port');
  t.true((record.phasesMs?.portWait ?? -1) >= releasedAt! - waitedFrom!, JSON.stringify(record.phasesMs));
  t.true(record.phasesMs?.proxy !== undefined, 'starting the proxy is a phase of its own still');
});
