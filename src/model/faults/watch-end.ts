/**
 * watch-end (error path on the watch side): when `at` fires, end the controller's open watch
 * streams of `kind` early, cleanly (`close`: the client re-watches from its last resourceVersion)
 * or with a reset (`reset`: RST_STREAM / TCP reset). With `expire`, the first re-watch of that kind
 * is answered 410 Expired (its resourceVersion is too old), so the client relists.
 */
import { describeTrigger } from '../trigger.js';
import { declareFault, field, optional, type FaultOf } from './declare.js';
import { booleanField, enumField, KIND_PATTERN, readKind, triggerField } from './fields.js';

export const WATCH_END_MODES = ['close', 'reset'] as const;
export type WatchEndMode = (typeof WATCH_END_MODES)[number];

export const watchEnd = declareFault({
  type: 'watch-end',
  description: "Error path on the watch side: end the controller's watches of a kind early",
  fields: {
    kind: field({ type: 'string', pattern: KIND_PATTERN.source, description: 'The kind whose watches end' }, (v, raw, path) =>
      readKind(v, raw, path, 'ConfigMap'),
    ),
    at: triggerField(),
    mode: enumField(WATCH_END_MODES, 'close: a clean end; reset: RST_STREAM / TCP reset'),
    expire: optional(booleanField('Answer the first re-watch 410 Expired, so the controller relists')),
  },
  describe: (f) =>
    `${f.mode === 'close' ? 'close' : 'reset'} the controller's ${f.kind} watches${f.expire ? ' (then 410 Expired on the re-watch)' : ''} when ${describeTrigger(f.at)}`,
});

export type WatchEndFault = FaultOf<typeof watchEnd>;

export const describeWatchEnd = (f: WatchEndFault): string => watchEnd.describe(f);
