/**
 * Arming and matching the api-error fault: the n-th write request matching `fault.on` gets
 * `fault.answer` (the answers themselves are built in ../api-errors.ts): a Status answered without
 * forwarding, a lost response (forwarded, applied, then the stream reset) or a slow answer. One-shot.
 */
import { describeApiError, type ApiErrorFault } from '../../src/model/plan.js';
import { parseKey, type ObjectKey } from '../../src/model/object-key.js';
import { isTriggerWriteVerb } from '../../src/model/controller-write.js';
import { ordinal } from '../../src/model/trigger.js';
import { apiErrorAction, nameForMessage, requestMatchKey } from '../api-errors.js';
import type { Exchange, RequestPlan } from '../exchange.js';
import type { TriggerKeys } from '../write-triggers.js';
import { faultIndexField, type FaultContext } from './context.js';

/** An armed api-error fault (see ApiErrorFaults.arm). */
export interface ArmedApiError {
  readonly fired: boolean;
  /** Until it fires: how many matching requests came (and of what). */
  whyNotFired(): string | undefined;
  cancel(): void;
}

interface ApiErrorEntry {
  fault: ApiErrorFault;
  faultIndex: number | undefined;
  /** Matching write requests so far. */
  seen: number;
  /** Requests of the same verb and kind under other keys (for whyNotFired). */
  nearKeys: Set<ObjectKey>;
  fired: boolean;
  onFired: (requestId: number) => void;
}

export class ApiErrorFaults {
  private entries: ApiErrorEntry[] = [];

  constructor(
    private readonly ctx: FaultContext,
    private readonly keys: TriggerKeys,
  ) {}

  /** `onFired` runs when the request matches, before anything is answered. */
  arm(fault: ApiErrorFault, faultIndex?: number, onFired: (requestId: number) => void = () => {}): ArmedApiError {
    const entry: ApiErrorEntry = { fault, faultIndex, seen: 0, nearKeys: new Set(), fired: false, onFired };
    this.entries.push(entry);
    return {
      get fired() {
        return entry.fired;
      },
      whyNotFired: () => {
        if (entry.fired) return undefined;
        const on = fault.on;
        if (entry.seen > 0) return `only ${entry.seen} matching request(s) came, the ${ordinal(entry.fault.on.occurrence)} was awaited`;
        const near = [...entry.nearKeys].slice(0, 3).join(', ');
        return `never matched: the controller never sent a ${on.verb} of ${on.key}${on.subresource ? ` ${on.subresource}` : ''}${near ? ` (it sent ${on.verb}s of ${near})` : ''}`;
      },
      cancel: () => {
        this.entries = this.entries.filter((e) => e !== entry);
      },
    };
  }

  /** How the request is answered if it is the one an armed fault waits for (counting it either way). */
  plan(ex: Exchange, body: Buffer): RequestPlan | undefined {
    if (this.entries.length === 0) return undefined;
    const f = ex.facts!;
    if (f.dryRun || !isTriggerWriteVerb(f.verb)) return undefined;
    const candidates = this.entries.filter(
      (e) => e.fault.on.verb === f.verb && (e.fault.on.subresource ?? undefined) === (f.resource?.subresource ?? undefined),
    );
    if (candidates.length === 0) return undefined;
    const key = requestMatchKey(
      f,
      body,
      (k) => this.keys.fold(k),
      (family) => this.keys.nextGenerated(family),
    );
    for (const entry of candidates) {
      if (key === entry.fault.on.key) entry.seen++;
      else if (key && parseKey(key)?.kind === parseKey(entry.fault.on.key)?.kind) entry.nearKeys.add(key);
    }
    for (const entry of candidates) {
      if (key !== entry.fault.on.key || entry.seen !== entry.fault.on.occurrence) continue;
      entry.fired = true;
      this.entries = this.entries.filter((e) => e !== entry);
      const idx = faultIndexField(entry.faultIndex);
      const description = describeApiError(entry.fault);
      this.ctx.record({ fault: 'api-error', phase: 'triggered', requestId: ex.id, key, ...idx, detail: description });
      try {
        entry.onFired(ex.id);
      } catch (err) {
        this.ctx.log(`a fault callback failed: ${(err as Error).message}`);
      }
      const action = apiErrorAction(entry.fault, f, nameForMessage(key));
      const applied = (detail: string) => this.ctx.record({ fault: 'api-error', phase: 'applied', requestId: ex.id, key, ...idx, detail });
      switch (action.kind) {
        case 'answer':
          return {
            answer: action.answer,
            onAnswered: (status) => applied(`answered ${status} ${String(action.answer.object.reason)} without forwarding (not applied)`),
          };
        case 'lose-response':
          return {
            loseResponse: true,
            onAnswered: (status) => applied(`the API server answered ${status}; the stream was reset before the controller got it`),
          };
        case 'delay-answer':
          return { holdAnswerMs: action.ms, onAnswered: (status) => applied(`the API server answered ${status}; holding the answer ${action.ms / 1000} s`) };
      }
    }
    return undefined;
  }
}
