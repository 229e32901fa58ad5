/**
 * Merging the traces of one run (the controller's and the cluster's) into one stream in `seq` order,
 * without loading them: each file is already in `seq` order (its writer stamps and appends in one
 * step), so a k-way merge of the open streams is enough. Events with equal `seq` (only the headers)
 * come in the order of the streams.
 */
import type { TraceEvent } from './trace.js';

export async function* mergeTracesBySeq(streams: ReadonlyArray<AsyncIterable<TraceEvent>>): AsyncGenerator<TraceEvent> {
  const iterators = streams.map((s) => s[Symbol.asyncIterator]());
  const heads: Array<TraceEvent | undefined> = await Promise.all(iterators.map(async (it) => (await it.next()).value as TraceEvent | undefined));
  try {
    for (;;) {
      let best = -1;
      for (let i = 0; i < heads.length; i++) {
        const h = heads[i];
        if (h !== undefined && (best < 0 || h.seq < heads[best]!.seq)) best = i;
      }
      if (best < 0) return;
      yield heads[best]!;
      const next = await iterators[best]!.next();
      heads[best] = next.done ? undefined : next.value;
    }
  } finally {
    // Close the files of streams not read to the end (an error downstream, or an early return).
    await Promise.all(iterators.map((it, i) => (heads[i] !== undefined ? it.return?.(undefined) : undefined)));
  }
}
