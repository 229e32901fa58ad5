/**
 * Pruning keeps every bug, pinned on hand-built traces: every plan the unpruned set has and the
 * pruned set does not either introduces a state a kept plan introduces too, or provably introduces
 * nothing a test could catch. What a plan introduces is worked out here by replaying the trace
 * through the proxy's own trigger matching (not the planner's records):
 *
 * - crash-after-write: the cluster state the restarted controller finds (the state right after the
 *   trigger fires). A dropped crash is fine if a kept crash exposes the same state, if the state is
 *   one the controller was quiet in during the reference run (no half-done work in it: the controller
 *   had gone quiet, so this is the state it settled on), or if the trigger never fires.
 * - hold-until: the hidden interval (object, from, until). A dropped hold is fine if a kept hold hides
 *   the same interval, if the controller did nothing effective in the episodes the held events
 *   opened (it reacts to nothing held), or if `until` is the controller's own write in an episode a
 *   held event opened (the hold is never released, the plan cannot be injected).
 *
 * Stale-state plans are not covered: which of them pruning drops rests on causality (an assumption
 * about the controller, docs/planner.md) more than on anything a trace can prove.
 * `test/bench/check-pruning.ts` (`npm run check:pruning`) checks the claim end to end for every
 * pattern, by running both plan sets.
 */
import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import type { PlannerOutput } from '../../planner/index.js';
import { isBookkeepingKey, isLeaderElectionRecord } from '../../src/model/bookkeeping.js';
import { normalizeForTrigger } from '../../src/model/change-match.js';
import { completedWrite } from '../../proxy/write-triggers.js';
import { WriteOccurrenceCounter } from '../../src/model/controller-write.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { staleViewMoment, type Fault, type Trigger } from '../../src/model/plan.js';
import type { RequestEvent, TraceEvent } from '../../src/model/trace.js';
import { TriggerEvaluator } from '../../src/model/trigger-eval.js';
import { TraceBuilder } from './_trace-builder.js';
import { CM, DB, STS, plan } from './_helpers.js';

const POD = 'Pod/default/db1-0';
const TS = '2024-01-01T00:00:00Z';

/** The seq of the event at which `trigger` fires when the proxy is fed this trace (undefined: never). */
function firesAt(events: TraceEvent[], trigger: Trigger): number | undefined {
  const evaluator = new TriggerEvaluator(trigger);
  const counter = new WriteOccurrenceCounter();
  const requests = new Map<number, RequestEvent>();
  const objects = new Map<string, KubeObject>();
  let started = false;
  for (const e of events) {
    if (e.type === 'controller') started = true;
    if (e.type === 'request') requests.set(e.id, e);
    if (e.type === 'response' && requests.has(e.id)) {
      const write = completedWrite(e.id, requests.get(e.id)!, e.status, e.object);
      if (write && evaluator.write(write, counter.record(write))) return e.seq;
    }
    if (e.type === 'cluster-change') {
      const prev = objects.get(e.key);
      const next = e.eventType === 'DELETED' ? undefined : e.object;
      if (next) objects.set(e.key, next);
      else objects.delete(e.key);
      if (started && evaluator.change(e.key, prev, next)) return e.seq;
    }
  }
  return undefined;
}

/**
 * The cluster's state right after the event with this seq, as the oracles compare it: every object
 * normalised (no resourceVersion, uid, timestamps), bookkeeping objects (Leases, Events) left out.
 */
function stateAt(events: TraceEvent[], seq: number): string {
  const objects = new Map<string, string>();
  for (const e of events) {
    if (e.seq > seq) break;
    if (e.type !== 'cluster-change' || isBookkeepingKey(e.key) || isLeaderElectionRecord(e.object)) continue;
    if (e.eventType === 'DELETED') objects.delete(e.key);
    else objects.set(e.key, JSON.stringify(normalizeForTrigger(e.object)));
  }
  const hash = createHash('sha256');
  for (const k of [...objects.keys()].sort()) hash.update(`${k}\n${objects.get(k)}\n`);
  return hash.digest('hex').slice(0, 16);
}

type Exposure = string;

/** What a plan introduces (see the file comment), or `never` when its trigger never fires. */
function exposure(events: TraceEvent[], fault: Fault): Exposure {
  if (fault.type === 'crash-after-write') {
    const at = firesAt(events, { write: fault.after });
    return at === undefined ? 'never' : `crash ${stateAt(events, at)}`;
  }
  if (fault.type === 'hold-until') {
    const from = firesAt(events, { change: fault.from });
    const until = firesAt(events, { change: fault.until });
    return from === undefined || until === undefined ? 'never' : `hold ${fault.key} ${from}..${until}`;
  }
  if (fault.type !== 'stale-restart') return 'never';
  const moment = staleViewMoment(fault);
  const view = firesAt(events, { change: moment.change });
  const at = firesAt(events, fault.at);
  // A view right before the change: the state of the events before it.
  return view === undefined || at === undefined ? 'never' : `stale ${stateAt(events, moment.before ? view - 1 : view)} @ ${stateAt(events, at)}`;
}

interface Episode {
  /** The watch event that opened it. */
  opener?: Extract<TraceEvent, { type: 'watch-event' }>;
  events: TraceEvent[];
}

function episodesOf(events: TraceEvent[]): Episode[] {
  const out: Episode[] = [];
  let current: Episode | undefined;
  for (const e of events) {
    if (e.type === 'episode' && e.phase === 'start') {
      const opener = events.find((x): x is Extract<TraceEvent, { type: 'watch-event' }> => x.type === 'watch-event' && x.seq === e.watchEventSeq);
      current = { ...(opener ? { opener } : {}), events: [] };
      out.push(current);
    } else if (current) current.events.push(e);
  }
  return out;
}

/** Cluster changes made by the controller's writes in this episode (their resourceVersions). */
function effectiveWritesIn(episode: Episode): string[] {
  const answers = episode.events.filter((e): e is Extract<TraceEvent, { type: 'response' }> => e.type === 'response' && e.status < 300);
  const writes = new Set(episode.events.filter((e) => e.type === 'request' && e.verb !== 'get' && e.verb !== 'list').map((e) => (e as RequestEvent).id));
  const rvs = answers
    .filter((r) => writes.has(r.id))
    .map((r) => r.object?.metadata?.resourceVersion)
    .filter((rv): rv is string => typeof rv === 'string');
  const changed = new Set(episode.events.filter((e) => e.type === 'cluster-change').map((e) => (e as { resourceVersion: string }).resourceVersion));
  return rvs.filter((rv) => changed.has(rv));
}

/** Violations of the property for one trace, given the planner's pruned and unpruned output. */
function violations(events: TraceEvent[], pruned: PlannerOutput, unpruned: PlannerOutput): string[] {
  const kept = new Set(pruned.plans.map((p) => exposure(events, p.spec.faults[0]!)));
  // States the controller was quiet in: when each episode starts (the previous one ended quiet), and at the end.
  const quiet = new Set(events.filter((e) => e.type === 'episode' && e.phase === 'start').map((e) => `crash ${stateAt(events, e.seq)}`));
  quiet.add(`crash ${stateAt(events, events[events.length - 1]!.seq)}`);
  const episodes = episodesOf(events);
  const out: string[] = [];
  for (const p of unpruned.plans) {
    const fault = p.spec.faults[0]!;
    if (fault.type === 'stale-restart') continue; // not covered here: see the file comment
    const e = exposure(events, fault);
    if (e === 'never' || kept.has(e)) continue;
    if (fault.type === 'crash-after-write' && quiet.has(e)) continue;
    if (fault.type === 'hold-until') {
      const from = firesAt(events, { change: fault.from })!;
      const until = events.find((x) => x.seq === firesAt(events, { change: fault.until })) as Extract<TraceEvent, { type: 'cluster-change' }>;
      const opened = episodes.filter((ep) => ep.opener?.key === fault.key && ep.opener.seq > from);
      if (opened.every((ep) => effectiveWritesIn(ep).length === 0)) continue; // reacted to nothing held
      const ownWrite = opened.some((ep) => ep.events.includes(until) && effectiveWritesIn(ep).includes(until.resourceVersion));
      if (ownWrite) continue; // never released
    }
    out.push(`${p.metadata.name} (${p.spec.description}) introduces ${e}, which no kept plan does`);
  }
  return out;
}

function check(t: ExecutionContext, events: TraceEvent[]): { pruned: PlannerOutput; unpruned: PlannerOutput } {
  const pruned = plan(events);
  const unpruned = plan(events, { prune: false });
  t.deepEqual(violations(events, pruned, unpruned), []);
  t.true(unpruned.plans.length > pruned.plans.length, 'the trace gives pruning something to drop');
  return { pruned, unpruned };
}

/** A reconcile with no-op writes, repeated states, a bookkeeping write and a last write per burst. */
function operatorRun(): TraceEvent[] {
  return new TraceBuilder()
    .external('ADDED', DB, { set: { 'spec.replicas': 1 }, deliver: true })
    .episode()
    .write('update', 'Lease/default/db-operator', { set: { 'spec.holderIdentity': 'a' } })
    .write('create', CM, { owner: DB, set: { 'data.v': '1' }, deliver: true })
    .write('patch', CM, { change: 'none' }) // no-op
    .write('create', STS, { owner: DB, set: { 'spec.replicas': 1 }, deliver: true })
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' }, deliver: true })
    .episode()
    .external('MODIFIED', DB, { set: { 'spec.replicas': 3 }, deliver: true })
    .episode()
    .write('patch', STS, { set: { 'spec.replicas': 3 }, deliver: true })
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Scaling' }, deliver: true })
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' }, deliver: true })
    .episode()
    .external('MODIFIED', DB, { set: { 'spec.replicas': 1 }, deliver: true })
    .episode()
    .write('patch', STS, { set: { 'spec.replicas': 1 }, deliver: true })
    .write('patch', CM, { status: 409 }) // refused
    .write('patch', CM, { set: { 'data.v': '2' }, deliver: true })
    .episode().events;
}

/** Pods come and go; the controller cleans up on a deletionTimestamp and removes its own finalizer. */
function podRun(): TraceEvent[] {
  return new TraceBuilder()
    .external('ADDED', POD, { set: { 'metadata.finalizers': ['example.com/cleanup'], 'status.phase': 'Pending' }, deliver: true })
    .episode()
    .write('patch', DB, { subresource: 'status', set: { 'status.members': 1 }, deliver: true })
    .episode()
    .external('MODIFIED', POD, { set: { 'status.phase': 'Running' }, deliver: true })
    .episode() // nothing to do
    .external('MODIFIED', POD, { set: { 'metadata.deletionTimestamp': TS }, deliver: true })
    .episode()
    .write('delete', 'PersistentVolumeClaim/default/data-db1-0')
    .write('patch', POD, { set: { 'metadata.finalizers': undefined }, change: 'DELETED', deliver: true })
    .episode()
    .write('patch', DB, { subresource: 'status', set: { 'status.members': 0 }, deliver: true })
    .episode().events;
}

/**
 * An edge-triggered controller (member-join's shape): it writes nothing on a pod's Pending states
 * and adds the pod to the members only when it sees it turn Running; it stores what it saw (the
 * informer's old object) without writing it anywhere.
 */
function edgeTriggeredRun(): TraceEvent[] {
  return new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', CM, { owner: DB, set: { 'data.members': '' }, deliver: true })
    .episode()
    .external('ADDED', POD, { set: { 'status.phase': 'Starting' }, deliver: true })
    .episode()
    .external('MODIFIED', POD, { set: { 'spec.nodeName': 'node-1', 'status.phase': 'Pending' }, deliver: true })
    .episode()
    .external('MODIFIED', POD, { set: { 'status.phase': 'Running' }, deliver: true })
    .episode()
    .write('patch', CM, { set: { 'data.members': 'db1-0' }, deliver: true })
    .episode()
    .write('patch', CM, { change: 'none' })
    .episode().events;
}

test('crash plans the pruned set drops expose a state a kept plan exposes, or one the controller was quiet in', (t) => {
  const { pruned, unpruned } = check(t, operatorRun());
  t.true(pruned.plans.some((p) => p.spec.pattern === 'intermediate-state'));
  t.true(
    unpruned.plans.filter((p) => p.spec.pattern === 'intermediate-state').length > pruned.plans.filter((p) => p.spec.pattern === 'intermediate-state').length,
  );
});

test('hold plans the pruned set drops hide an interval a kept plan hides, hide nothing the controller reacts to, or are never released', (t) => {
  const { pruned, unpruned } = check(t, podRun());
  const holds = (o: PlannerOutput) => o.plans.filter((p) => p.spec.pattern === 'unobserved-state').length;
  t.true(holds(unpruned) > holds(pruned));
});

test('hold plans the pruned set drops on an edge-triggered controller: what it reacts to is the state after the window', (t) => {
  const { pruned } = check(t, edgeTriggeredRun());
  // The hold that catches such a controller's bug: the pod hidden from its creation until Running.
  t.true(
    pruned.plans.some(
      (p) =>
        p.spec.pattern === 'unobserved-state' &&
        /Pod\/default\/db1-0 is created .* until Pod\/default\/db1-0 is updated \(status.phase/.test(p.spec.description),
    ),
    pruned.plans.map((p) => p.spec.description).join('\n'),
  );
});

test('the property fails when pruning drops a plan that exposes a new state (it can catch a bad stage)', (t) => {
  const caught = new Set<string>();
  for (const events of [operatorRun(), podRun(), edgeTriggeredRun()]) {
    const pruned = plan(events);
    const unpruned = plan(events, { prune: false });
    // A pruning that also dropped one kept plan: the property must notice, for plans of each pattern.
    for (const [i, p] of pruned.plans.entries()) {
      const broken = { ...pruned, plans: pruned.plans.filter((_, j) => j !== i) };
      if (violations(events, broken, unpruned).length > 0) caught.add(p.spec.pattern);
    }
  }
  t.deepEqual([...caught].sort(), ['intermediate-state', 'unobserved-state']);
});
