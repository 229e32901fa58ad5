/**
 * Unobserved windows that end in a state the controller reacted to. The cancellation rule
 * (trace-analysis.ts `cancelledBy`) pairs a change with the next one that undoes it; that misses the
 * controllers Sieve found edge-triggered (cassandra-operator 398, rabbitmq-operator 758, zookeeper
 * 453, casskop 342, K8SPXC-918): they act only on a transition they see (a pod from Pending to
 * Running), so the bug shows when they first see the object already in the later state, as after a
 * restart or a relist at that moment. Two windows per update M of an object that the controller was
 * shown by a watch and may have reacted to with a write (that reaction is what could differ):
 *   creation     from the object's creation until M: the relist shows the object first in state M
 *                (the creation's ADDED and every state up to M hidden); only up to the first
 *                update the controller answered with an effective write;
 *   transitions  from the first change after the previous state the controller reacted to (or after
 *                the creation) until M: the controller sees that state, then M, never those between,
 *                however many transitions they are.
 */
import { upperBound, type ChangeRecord, type RunAnalysis } from '../trace-analysis.js';

export interface UnobservedWindow {
  /** The first hidden change. */
  from: ChangeRecord;
  /** The change after which the controller relists (it sees this state or a later one first). */
  until: ChangeRecord;
  kind: 'creation' | 'transitions';
}

/** Every window of both kinds in the run, ordered by their end; bookkeeping objects left out. */
export function reactedStateWindows(main: RunAnalysis): UnobservedWindow[] {
  const out: UnobservedWindow[] = [];
  // Per object, walking its changes in order: its creation, and the latest state the controller reacted to.
  const creation = new Map<string, ChangeRecord | undefined>();
  const lastReaction = new Map<string, ChangeRecord>();
  // Objects whose creation window is closed: an update since the creation got an effective reaction.
  const creationWindowClosed = new Set<string>();
  const previous = new Map<string, ChangeRecord>();
  for (const m of main.changes) {
    const key = m.rawKey;
    const before = previous.get(key);
    previous.set(key, m);
    if (m.eventType === 'ADDED' || m.eventType === 'DELETED') {
      creation.set(key, m.eventType === 'ADDED' ? m : undefined);
      lastReaction.delete(key);
      creationWindowClosed.delete(key);
      if (m.eventType === 'ADDED' && m.causal & 2) lastReaction.set(key, m);
      continue;
    }
    const created = creation.get(key);
    const reacted = lastReaction.get(key);
    const creationOpen = !creationWindowClosed.has(key);
    if (m.causal & 2) {
      lastReaction.set(key, m);
      creationWindowClosed.add(key);
    }
    // Only states the controller reacted to (a delivery of M may have caused a write) end a window.
    if (!(m.causal & 1) || !m.watched || !m.diff || m.beforeStart || m.bookkeeping || !before) continue;
    // Up to the first update the controller answered with an effective write: a later end would also
    // hide that answered state, which the transitions window after it leaves shown.
    if (creationOpen && created?.watched && !created.beforeStart) out.push({ from: created, until: m, kind: 'creation' });
    // The first change after the state the controller last reacted to (or after the creation).
    const after = reacted ?? created;
    const start = after === undefined ? undefined : firstAfter(main, key, after.index);
    if (start && start.index < m.index && start.watched) out.push({ from: start, until: m, kind: 'transitions' });
  }
  return out;
}

/** The object's first change after change `index`. */
function firstAfter(main: RunAnalysis, rawKey: string, index: number): ChangeRecord | undefined {
  const list = main.changesOf(rawKey);
  const at = upperBound(list, index);
  return at < list.length ? main.changes[list[at]!] : undefined;
}
