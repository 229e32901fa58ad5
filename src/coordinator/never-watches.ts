/**
 * Names a controller that never watches. kperturb needs a controller that lists and then watches; one
 * whose "watches" come back as lists (a watch parameter the server reads as false) or that lists in a
 * tight loop never goes quiet, and "did not go quiet" says nothing of why. While the controller
 * starts, this sits between the proxy and the controller trace and counts the lists of each request
 * line; once one has been sent LIST_LOOP_COUNT times and no watch at all, `diagnosis()` says so, with
 * the request and what kperturb answered.
 */
import { kubeBool } from '../model/query-params.js';
import type { ControllerTraceEvent, ClusterTraceEvent, RequestEvent, ResponseEvent, TraceSink, Unstamped } from '../model/trace.js';

/** The same list this many times, and not one watch: a controller listing in a loop (the issue's Python client sent about 240 a second). */
export const LIST_LOOP_COUNT = 100;

interface Tally {
  count: number;
  request: Unstamped<RequestEvent>;
  /** The answer to the latest of them: status and the kind of its body. */
  status?: number;
  kind?: string;
}

export class NeverWatchesCheck {
  /** The sink to give the proxy in place of `inner`. */
  readonly sink: TraceSink;
  private observing = true;
  private watches = 0;
  private readonly lists = new Map<string, Tally>();
  /** Request id -> its tally, until the answer comes. */
  private readonly pending = new Map<number, Tally>();

  constructor(inner: TraceSink) {
    const sink: TraceSink = {
      append: (event) => {
        if (this.observing) this.observe(event);
        return inner.append(event);
      },
    };
    const answer = inner.appendAnswer?.bind(inner);
    if (answer) {
      sink.appendAnswer = (event, objectJson) => {
        if (this.observing) this.answered(event, kindOf(objectJson));
        return answer(event, objectJson);
      };
    }
    const watchEvent = inner.appendWatchEvent?.bind(inner);
    if (watchEvent) sink.appendWatchEvent = watchEvent;
    this.sink = sink;
  }

  /** Start-up is over: stop counting. */
  stop(): void {
    this.observing = false;
    this.lists.clear();
    this.pending.clear();
  }

  /** Why the controller will never go quiet, when it lists in a loop and has never watched; else undefined. */
  diagnosis(): string | undefined {
    if (this.watches > 0) return undefined;
    let worst: Tally | undefined;
    for (const t of this.lists.values()) if (!worst || t.count > worst.count) worst = t;
    if (!worst || worst.count < LIST_LOOP_COUNT) return undefined;
    return describe(worst);
  }

  private observe(event: Unstamped<ControllerTraceEvent | ClusterTraceEvent>): void {
    if (event.type === 'request') {
      if (event.verb === 'watch') this.watches++;
      if (event.verb !== 'list') return;
      const line = requestLine(event);
      let tally = this.lists.get(line);
      if (!tally) this.lists.set(line, (tally = { count: 0, request: event }));
      tally.count++;
      tally.request = event;
      this.pending.set(event.id, tally);
    } else if (event.type === 'response') {
      this.answered(event, event.object && typeof event.object.kind === 'string' ? event.object.kind : undefined);
    }
  }

  private answered(event: Unstamped<ResponseEvent>, kind: string | undefined): void {
    const tally = this.pending.get(event.id);
    if (!tally) return;
    this.pending.delete(event.id);
    tally.status = event.status;
    if (kind !== undefined) tally.kind = kind;
    else delete tally.kind;
  }
}

function requestLine(r: Unstamped<RequestEvent>): string {
  const query = new URLSearchParams(r.query).toString();
  return `${r.method} ${r.path}${query ? `?${query}` : ''}`;
}

/** The `kind` of a JSON answer, without parsing a list of any size. */
function kindOf(json: string): string | undefined {
  return /"kind"\s*:\s*"([^"]*)"/.exec(json.slice(0, 512))?.[1];
}

function describe(t: Tally): string {
  const answer = t.status === undefined ? 'no answer yet' : `${t.status}${t.kind ? ` ${t.kind}` : ''}`;
  const watchParam = t.request.query.watch;
  const why =
    watchParam !== undefined && !kubeBool(watchParam)
      ? `: its watch=${watchParam} asks for a list (kube-apiserver reads only "0", "false" and no value at all as false)`
      : '';
  return (
    `the controller never watches: it sent ${requestLine(t.request)} at least ${LIST_LOOP_COUNT} times and no watch request, ` +
    `and kperturb answered each with a list (last answer: ${answer})${why}; ` +
    'kperturb needs a controller that lists, then watches (see controller.log)'
  );
}
