/**
 * Findings on a real campaign (issue 36): the stale views of the stale-deletion example that still
 * show the old cluster's deletion all find the planted bug (the finalizer deletes the new cluster's
 * StatefulSet by name), and their bug verdicts are one finding, whose signature is the extra delete
 * of the StatefulSet, with its shortest reproducer and the command that runs it again; results.json
 * carries the same finding for scripts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExampleCampaign, describeResults, exampleTest } from './_campaign.js';
import { groupFindings } from '../../oracles/findings.js';
import type { ResultsFile } from '../../src/model/results.js';

const campaign = new ExampleCampaign('stale-deletion', 'buggy');
/** The stale view that still shows the old cluster's deletionTimestamp (as stale-deletion.test.ts prefers). */
const STALE_DELETION_VIEW =
  /view frozen right after MongoCluster\/default\/mc1 is updated \(metadata\.deletionGracePeriodSeconds: undefined -> 0, metadata\.deletionTimestamp/;

exampleTest('the bug verdicts of every stale view that shows the deletion are one finding: the extra delete of the StatefulSet', { go: true }, async (t) => {
  const { results } = await campaign.run('stale-state', (plans) => plans.filter((p) => STALE_DELETION_VIEW.test(p.spec.description)));
  const bugs = results.filter((r) => r.verdict === 'bug');
  t.true(bugs.length >= 2, `at least two bug verdicts to group: ${describeResults(results)}`);
  const found = groupFindings(results);
  t.is(found.length, 1, JSON.stringify(found.map((f) => f.summary)));
  const [finding] = found;
  t.is(finding!.class, 'bug');
  t.deepEqual(finding!.signature.divergence, { kind: 'extra', verb: 'delete', object: 'StatefulSet/default/mc1-rs0' });
  t.is(finding!.plans.length, bugs.length);
  t.regex(finding!.command ?? '', /^kperturb test \S+\.yaml -c \S+kperturb\.yaml$/);
  const { out, config } = await campaign.prepare();
  const written = JSON.parse(readFileSync(join(out, config.name, 'results.json'), 'utf8')) as ResultsFile;
  t.deepEqual(
    written.findings?.map((f) => f.summary),
    [finding!.summary],
  );
});
