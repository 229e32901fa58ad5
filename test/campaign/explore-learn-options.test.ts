/**
 * Every run explore judges is learned with the cluster's Events in its trace: the sequences' and the
 * rollback and differential runs' (the steps after a refused input are judged in the rollback run, and
 * the judge reads a pod's refusal from the StatefulSet controller's FailedCreate Event).
 */
import test from 'ava';
import { exploreLearnOptions } from '../../src/campaign/explore.js';

test("explore's runs, the rollback and differential runs among them, record the cluster's Events", (t) => {
  const log = () => undefined;
  const signal = new AbortController().signal;
  t.like(exploreLearnOptions({ out: '/tmp/x', log }), { out: '/tmp/x', recordEvents: true });
  t.like(exploreLearnOptions({ out: '/tmp/x', log, signal, cluster: { kind: 'embedded' } }), { recordEvents: true, signal, cluster: { kind: 'embedded' } });
});
