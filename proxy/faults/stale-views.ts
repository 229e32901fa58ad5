/**
 * The stale-state fault's side in the proxy: which connection epoch is served a view frozen at a
 * resourceVersion (the view itself is ../stale-view.ts), and how each of that epoch's requests is
 * answered from it: lists rewritten, watches held until release, WatchList refused.
 */
import type { ContractMode } from '../../src/model/results.js';
import type { ClusterView } from '../../src/recorder/cluster-recorder.js';
import type { Epoch } from '../epoch.js';
import type { Exchange, RequestPlan } from '../exchange.js';
import { StaleView, watchListForbidden } from '../stale-view.js';
import { faultIndexField, type FaultContext } from './context.js';
import { loopSignature } from '../loop-signature.js';
import { kubeBool } from '../../src/model/query-params.js';

export class StaleViews {
  private readonly views = new WeakMap<Epoch, StaleView>();
  private readonly beyondContractReasons = new Set<string>();

  constructor(
    private readonly ctx: FaultContext,
    private readonly clusterView: ClusterView | undefined,
    private readonly contract: ContractMode | undefined,
  ) {}

  /** Why what the faults served went beyond the API contract, once per reason (empty: it stayed within). */
  beyondContract(): string[] {
    return [...this.beyondContractReasons];
  }

  /**
   * Serves `epoch`'s controller a view frozen at `resourceVersion` until the returned view is
   * released; with `kinds`, only those kinds' lists and watches are frozen.
   */
  serve(epoch: Epoch, incarnation: number, resourceVersion: string, faultIndex?: number, kinds?: readonly string[]): StaleView {
    if (!this.clusterView) throw new Error("stale views need the proxy's cluster view");
    const view = new StaleView(resourceVersion, this.clusterView, kinds);
    this.views.set(epoch, view);
    const idx = faultIndexField(faultIndex);
    const scope = kinds ? ` for ${kinds.join(', ')} (every other kind live)` : '';
    this.ctx.record({
      fault: 'stale-restart',
      phase: 'held',
      resourceVersion,
      ...idx,
      detail: `serving the controller (incarnation ${incarnation}) a view frozen at resourceVersion ${resourceVersion}${scope}`,
    });
    const release = view.release.bind(view);
    view.release = () => {
      if (view.released) return;
      release();
      this.ctx.record({
        fault: 'stale-restart',
        phase: 'released',
        resourceVersion,
        ...idx,
        detail: 'stale view released: held watches continue from where they asked, new requests are live',
      });
    };
    return view;
  }

  /** `plan` extended with how the request is served from its epoch's stale view, if it has one. */
  plan(ex: Exchange, plan: RequestPlan | undefined): RequestPlan | undefined {
    const f = ex.facts!;
    const view = this.views.get(ex.epoch);
    if (!view || view.released) return plan;
    // Every answer but a watch's tells whether the controller is going round in a loop on the view.
    if (!f.isWatch) {
      const before = plan?.onAnswered;
      plan = {
        ...plan,
        onAnswered: (status, object) => {
          before?.(status, object);
          const { signature, write, undoable } = loopSignature(f, status, object);
          view.answered(signature, status, write, undoable);
        },
      };
    }
    const rv = f.query.resourceVersion;
    // resourceVersion unset asks for a consistent read (a LIST from etcd, a WATCH from the newest
    // state): no API server answers it from a lagging cache. "0" may be answered by any cache.
    const consistentRead = rv === undefined || rv === '';
    if (consistentRead && this.contract === 'strict') return plan;
    const contract = consistentRead
      ? 'resourceVersion unset: a consistent read, beyond the API contract'
      : 'resourceVersion "0": a lagging cache may answer this';
    const beyond = consistentRead
      ? { beyondContract: `${f.verb === 'watch' ? 'a WATCH' : 'a LIST'} with resourceVersion unset (a consistent read) answered from a stale view` }
      : {};
    const note = (detail: string) => {
      view.served();
      if (beyond.beyondContract) this.beyondContractReasons.add(beyond.beyondContract);
      this.ctx.record({ fault: 'stale-restart', phase: 'applied', requestId: ex.id, resourceVersion: view.resourceVersion, ...beyond, detail });
    };
    if (view.appliesToWatch(f)) {
      if (kubeBool(f.query.sendInitialEvents ?? null)) {
        note('WatchList (sendInitialEvents) refused with 422 so the client falls back to LIST');
        return { ...plan, answer: { status: 422, object: watchListForbidden() } };
      }
      const fromScratch = rv === undefined || rv === '' || rv === '0';
      const synthetic = fromScratch ? view.objectsFor(f) : undefined;
      if (fromScratch && !synthetic) return plan;
      note(
        fromScratch
          ? `WATCH from "${rv ?? ''}": the view's state as ADDED events, then held until release`
          : `WATCH from resourceVersion ${rv} held until release`,
      );
      return {
        ...plan,
        heldWatch: {
          ...(synthetic ? { synthetic } : {}),
          ...(fromScratch ? { resumeFrom: view.resourceVersion } : {}),
          whenReleased: (resume) => view.whenReleased(resume),
        },
      };
    }
    if (view.appliesToList(f)) {
      return {
        ...plan,
        rewriteList: (live) => {
          const out = view.rewriteList(f, live);
          if (out) note(`LIST served from the view at resourceVersion ${view.resourceVersion} (${contract})`);
          return out;
        },
      };
    }
    return plan;
  }
}
