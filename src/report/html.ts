/**
 * The HTML report (`kperturb report --html FILE`): one self-contained page (inline CSS, no scripts,
 * nothing fetched) that opens on the findings (one per distinct bug, oracles/findings.ts: class,
 * plans, shortest reproducer and its command) and the workloads that tested nothing, then the plans
 * (what needs a look first), and one section per failing plan: its alarms, a timeline of what the cluster did and what the controller sent and was
 * shown with the fault marked, and a diff of every object the end state differs in.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { stringify } from 'yaml';
import type { KubeObject, ObjectKey } from '../model/object-key.js';
import type { Alarm, PlanResult, UntestedWorkload } from '../model/results.js';
import { groupFindings } from '../../oracles/findings.js';
import { confirmationLines, findingsLine } from './terminal.js';
import { ABSENT } from '../model/results.js';
import { formatDuration } from './table.js';
import { withoutMaskedFields } from '../../oracles/end-state.js';
import { Masks, learnMasks } from '../../oracles/masks.js';
import { endStateView } from '../../oracles/object-identity.js';
import { readEndState, readRunTraces, RUN_FILES } from '../io/run-dir.js';
import { BEYOND_CONTRACT, countVerdicts, summaryLine } from './groups.js';
import { diffLines, type DiffLine } from './line-diff.js';
import type { LoadedResults } from '../io/results-file.js';
import { buildTimeline, type Timeline } from './timeline.js';
import { redactObject } from '../model/redact.js';

export interface ObjectDiff {
  key: ObjectKey;
  lines?: DiffLine[];
  note?: string;
}

export interface PlanDetails {
  timeline?: Timeline;
  /** What the first reference run did with the objects named in alarms, for comparison. */
  referenceRows?: { dir: string; rows: Timeline['rows'] };
  diffs: ObjectDiff[];
  logTail?: string;
  /** Why the timeline and diffs are missing (the run directory was moved...). */
  unavailable?: string;
}

const LOG_TAIL_LINES = 60;

/** Reads what a failing plan's section shows from its run directory and its reference runs. */
export async function collectPlanDetails(r: PlanResult): Promise<PlanDetails> {
  if (!existsSync(join(r.runDir, RUN_FILES.record))) return { diffs: [], unavailable: `the run directory ${r.runDir} is not there any more` };
  const traces = await readRunTraces(r.runDir);
  const timeline = buildTimeline(traces);
  const testState = readEndState(join(r.runDir, RUN_FILES.endState)).objects;
  const refStates = (r.referenceRunDirs ?? [])
    .filter((d) => existsSync(join(d, RUN_FILES.endState)))
    .map((d) => readEndState(join(d, RUN_FILES.endState)).objects);
  const refViews = refStates.map(endStateView);
  const masks = new Masks([], learnMasks(refViews.map((v) => v.named)));
  const diffs: ObjectDiff[] = [];
  const keys = [...new Set(r.alarms.filter((a) => a.oracle === 'end-state').map((a) => a.object))];
  for (const key of keys) {
    if (key.endsWith('*')) {
      diffs.push({ key, note: 'objects with generated names are compared by count, not content' });
      continue;
    }
    const mask = masks.forObject(key);
    const ref = refViews.map((v) => v.named.get(key)).find((o) => o !== undefined);
    const tst = endStateView(testState).named.get(key);
    if (refStates.length === 0 && ref === undefined) {
      diffs.push({ key, note: 'the reference runs are not there any more' });
      continue;
    }
    diffs.push({ key, lines: diffLines(yamlLines(key, ref, mask), yamlLines(key, tst, mask)) });
  }
  const focus = new Set(r.alarms.map((a) => a.object));
  const refDir = (r.referenceRunDirs ?? []).find((d) => existsSync(join(d, RUN_FILES.clusterTrace)));
  const referenceRows = refDir
    ? { dir: refDir, rows: buildTimeline(await readRunTraces(refDir), Infinity).rows.filter((row) => row.key !== undefined && focus.has(row.key)) }
    : undefined;
  const logFile = join(r.runDir, RUN_FILES.controllerLog);
  const logTail = existsSync(logFile)
    ? readFileSync(logFile, 'utf8')
        .split('\n')
        .slice(-LOG_TAIL_LINES - 1)
        .join('\n')
    : undefined;
  return { timeline, diffs, ...(referenceRows && referenceRows.rows.length > 0 ? { referenceRows } : {}), ...(logTail !== undefined ? { logTail } : {}) };
}

function yamlLines(key: ObjectKey, obj: KubeObject | undefined, mask: ReturnType<Masks['forObject']>): string[] {
  if (obj === undefined) return [];
  return stringify(redactObject(key, withoutMaskedFields(obj, mask)), { lineWidth: 0 })
    .trimEnd()
    .split('\n');
}

export async function writeHtmlReport(file: string, loaded: LoadedResults): Promise<void> {
  const details = new Map<PlanResult, PlanDetails>();
  for (const r of loaded.results) if (isFailing(r)) details.set(r, await collectPlanDetails(r));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, renderHtmlReport({ ...loaded, details, generatedAt: new Date().toISOString() }));
}

function isFailing(r: PlanResult): boolean {
  return r.verdict === 'bug' || r.verdict === 'flaky';
}

export interface HtmlReportInput {
  results: readonly PlanResult[];
  sources: readonly string[];
  notes: readonly string[];
  details: ReadonlyMap<PlanResult, PlanDetails>;
  generatedAt: string;
  /** Workloads that tested nothing (LoadedResults.untested). */
  untested?: readonly UntestedWorkload[];
}

/** The plans table's order: what needs a look first. */
const HTML_VERDICT_ORDER: readonly PlanResult['verdict'][] = ['bug', 'flaky', 'error', 'workload-failed', 'not-injected', 'pass'];

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const h = escapeHtml;

function anchor(r: PlanResult): string {
  return `plan-${r.controller}-${r.workload}-${r.plan}`.replace(/[^A-Za-z0-9_-]/g, '-');
}

function fieldCell(a: Alarm): string {
  if (a.field !== undefined) return `<code>${h(a.field)}</code>`;
  const label: Partial<Record<NonNullable<Alarm['check']>, string>> = {
    missing: 'whole object',
    unexpected: 'whole object',
    'generated-count': 'number of objects',
    'duplicate-children': 'children of one owner',
    created: 'times created',
    deleted: 'times deleted',
  };
  return `<i>${h((a.check && label[a.check]) ?? '—')}</i>`;
}

/** `asObject`: a whole object, shown in the diff below rather than as JSON. */
function value(v: unknown, max = 140, asObject = false): string {
  if (asObject && v !== ABSENT && typeof v === 'object' && v !== null) return '<i>present (see the diff below)</i>';
  const text = v === ABSENT ? 'absent' : typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? 'undefined');
  if (text.length <= max) return `<code>${h(text)}</code>`;
  return `<code title="${h(text.slice(0, 2000))}">${h(text.slice(0, max))}…</code>`;
}

function badge(verdict: string, r?: PlanResult): string {
  const beyond = r?.beyondContract?.length ? ` <span class="badge contract" title="${h(r.beyondContract.join('; '))}">${h(BEYOND_CONTRACT)}</span>` : '';
  return `<span class="badge v-${h(verdict)}">${h(verdict)}</span>${beyond}`;
}

export function renderHtmlReport(input: HtmlReportInput): string {
  const { results } = input;
  const counts = countVerdicts(results);
  const found = groupFindings(results);
  const failing = results.filter(isFailing);
  const untested = results.filter((r) => r.verdict === 'not-injected' || r.verdict === 'workload-failed' || r.verdict === 'error');
  const controllers = [...new Set(results.map((r) => r.controller))];
  const out: string[] = [];
  out.push(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kperturb report: ${h(controllers.join(', '))}</title>
<style>${CSS}</style>
</head>
<body>
<header>
<h1>kperturb report</h1>
<p class="lead">${h(findingsLine(results, found))}</p>
<p class="sub">${h(controllers.join(', '))} · ${h(summaryLine(results))} · generated ${h(input.generatedAt)}</p>
<div class="chips">${(Object.keys(counts) as Array<keyof typeof counts>)
    .filter((v) => counts[v] > 0)
    .map((v) => `<span class="chip v-${v}"><b>${counts[v]}</b> ${h(v)}</span>`)
    .join('')}</div>
${input.notes.map((n) => `<p class="note">${h(n)}</p>`).join('\n')}
</header>
<main>`);

  if (found.length > 0) {
    out.push(`<section id="findings"><h2>Findings</h2>`);
    for (const [i, f] of found.entries()) {
      const plans = f.plans
        .map((p) => {
          const r = results.find((x) => x.controller === f.controller && x.workload === p.workload && x.plan === p.plan);
          return r ? `<a href="#${anchor(r)}">${h(p.plan)}</a>` : h(p.plan);
        })
        .join(', ');
      const size = f.reproducer.size ? ` (${f.reproducer.size.faults} fault(s), ${f.reproducer.size.steps} workload step(s))` : '';
      out.push(
        `<div class="finding"><h3>${i + 1}. <span class="badge f-${h(f.class)}">${h(f.class)}</span> ${h(f.controller)}: ${h(f.summary)}</h3>`,
        `<p>${h(f.why)}</p>`,
        `<p><b>${f.plans.length === 1 ? 'Plan' : `${f.plans.length} plans`}:</b> ${plans}</p>`,
        `<p><b>Shortest reproducer:</b> ${h(f.reproducer.workload)} / ${h(f.reproducer.plan)}${h(size)}: ${h(f.reproducer.description)}</p>`,
        f.command ? `<pre>${h(f.command)}</pre>` : '',
        `<ul>${f.alarms.map((a) => `<li><span class="oracle">${h(a.oracle)}</span> ${h(a.message)}</li>`).join('')}</ul>`,
        f.confirmation || f.recoveryRun ? `<pre class="reruns">${h(confirmationLines(f).join('\n'))}</pre>` : '',
        `</div>`,
      );
    }
    out.push(`</section>`);
  }

  const untestedWorkloads = input.untested ?? [];
  if (untestedWorkloads.length > 0) {
    out.push(
      `<section id="untested"><h2>Workloads that tested nothing (not clean)</h2><table><thead><tr><th>controller / workload</th><th>what happened</th><th>what to do</th></tr></thead><tbody>`,
    );
    for (const u of untestedWorkloads) out.push(`<tr><td>${h(u.controller)} / ${h(u.workload)}</td><td>${h(u.detail)}</td><td>${h(u.advice)}</td></tr>`);
    out.push(`</tbody></table></section>`);
  }

  out.push(
    `<section><h2>Plans</h2><table class="plans"><thead><tr><th>controller / workload</th><th>plan</th><th>verdict</th><th>alarms</th><th>time</th><th>perturbation</th></tr></thead><tbody>`,
  );
  const ordered = [...results].sort((a, b) => HTML_VERDICT_ORDER.indexOf(a.verdict) - HTML_VERDICT_ORDER.indexOf(b.verdict));
  for (const r of ordered) {
    const name = isFailing(r) ? `<a href="#${anchor(r)}">${h(r.plan)}</a>` : h(r.plan);
    out.push(
      `<tr><td>${h(r.controller)} / ${h(r.workload)}</td><td>${name}</td><td>${badge(r.verdict, r)}</td><td class="num">${r.alarms.length}</td><td class="num">${h(formatDuration(r.durationMs))}</td><td>${h(r.description)}</td></tr>`,
    );
  }
  out.push(`</tbody></table></section>`);

  if (untested.length > 0) {
    out.push(`<section><h2>Plans that tested nothing</h2><table><thead><tr><th>plan</th><th>verdict</th><th>perturbation</th><th>why</th></tr></thead><tbody>`);
    for (const r of untested) out.push(`<tr><td>${h(r.plan)}</td><td>${badge(r.verdict)}</td><td>${h(r.description)}</td><td>${h(r.error ?? '')}</td></tr>`);
    out.push(`</tbody></table></section>`);
  }

  for (const r of failing) out.push(renderPlanSection(r, input.details.get(r) ?? { diffs: [] }));

  out.push(`</main>
<footer>Sources: ${input.sources.map((s) => `<code>${h(s)}</code>`).join(', ')}</footer>
</body>
</html>
`);
  return out.join('\n');
}

function renderPlanSection(r: PlanResult, d: PlanDetails): string {
  const out: string[] = [];
  out.push(`<section class="plan" id="${anchor(r)}">
<h2>${badge(r.verdict, r)} ${h(r.plan)} <span class="where">${h(r.controller)} / ${h(r.workload)}</span></h2>
<p class="perturbation"><b>Perturbation:</b> ${h(r.description)}</p>${r.beyondContract?.length ? `\n<p class="note"><b>Beyond the API contract:</b> ${h(r.beyondContract.join('; '))}. No real API server does that: check this bug with <code>kperturb test --contract strict</code> (docs/fidelity.md).</p>` : ''}
<p class="rundir">run: <code>${h(r.runDir)}</code>${r.confirmationRunDir ? ` · confirmation run: <code>${h(r.confirmationRunDir)}</code>` : ''}</p>
<h3>Alarms</h3>
<table class="alarms"><thead><tr><th>oracle</th><th>object</th><th>field</th><th>reference</th><th>test</th><th>what it means</th></tr></thead><tbody>`);
  for (const a of r.alarms) {
    out.push(
      `<tr${a.flaky ? ' class="is-flaky"' : ''}><td><span class="oracle">${h(a.oracle)}</span>${a.flaky ? ' <span class="flaky">flaky</span>' : ''}</td><td class="obj"><code>${h(a.object)}</code></td><td>${fieldCell(a)}</td>` +
        `<td>${a.reference.map((v) => value(v, 140, a.check === 'missing')).join('<br>')}</td><td>${value(a.test, 140, a.check === 'unexpected')}</td><td>${h(a.message)}</td></tr>`,
    );
  }
  out.push(`</tbody></table>`);
  if (d.unavailable) {
    out.push(`<p class="note">Timeline and diff unavailable: ${h(d.unavailable)}</p></section>`);
    return out.join('\n');
  }
  if (d.diffs.length > 0) {
    out.push(
      `<h3>End-state diff <span class="legend"><span class="del">− reference run</span> <span class="add">+ test run</span> (masked fields such as uid and resourceVersion left out)</span></h3>`,
    );
    for (const diff of d.diffs) {
      out.push(`<h4><code>${h(diff.key)}</code></h4>`);
      if (diff.note || !diff.lines) out.push(`<p class="note">${h(diff.note ?? '')}</p>`);
      else {
        const only = (op: '-' | '+') => diff.lines!.length > 0 && diff.lines!.every((l) => l.op === op);
        const lines = diff.lines.map((l) => `<span class="${l.op === '-' ? 'del' : l.op === '+' ? 'add' : 'ctx'}">${l.op} ${h(l.text)}</span>`);
        if (only('-')) lines.push('<span class="add">+ (the test run ended without this object)</span>');
        if (only('+')) lines.unshift('<span class="del">- (the reference runs ended without this object)</span>');
        out.push(`<pre class="diff">${lines.join('\n')}</pre>`);
      }
    }
  }
  if (d.timeline) out.push(renderTimeline(d.timeline, new Set(r.alarms.map((a) => a.object))));
  if (d.referenceRows) {
    out.push(`<h3>For comparison: the alarmed objects in reference run <code>${h(basename(d.referenceRows.dir))}</code></h3>`);
    out.push(
      `<table class="timeline"><thead><tr><th class="t">time</th><th>workload</th><th>controller: sent / shown</th><th>cluster</th></tr></thead><tbody>`,
    );
    for (const row of d.referenceRows.rows) {
      const cell = `<span class="tone-${row.tone} mark">${h(row.text)}</span>`;
      out.push(
        `<tr><td class="t">+${(row.atMs / 1000).toFixed(3)} s</td>${['workload', 'controller', 'cluster'].map((l) => `<td>${l === row.lane ? cell : ''}</td>`).join('')}</tr>`,
      );
    }
    out.push(`</tbody></table>`);
  }
  if (d.logTail !== undefined && d.logTail.trim() !== '') {
    out.push(`<details><summary>controller.log (last ${LOG_TAIL_LINES} lines)</summary><pre class="log">${h(d.logTail)}</pre></details>`);
  }
  out.push(`</section>`);
  return out.join('\n');
}

function renderTimeline(t: Timeline, focus: ReadonlySet<string>): string {
  const out: string[] = [];
  out.push(
    `<h3>Timeline <span class="legend">what the workload did · what the controller sent and was shown (through the proxy) · what the cluster did (kperturb's own watch); <span class="mark">objects named in alarms</span>; <span class="fault-legend">the fault</span></span></h3>`,
  );
  if (t.faultSeq === undefined) out.push(`<p class="note">The fault never fired in this run.</p>`);
  out.push(`<table class="timeline"><thead><tr><th class="t">time</th><th>workload</th><th>controller: sent / shown</th><th>cluster</th></tr></thead><tbody>`);
  let afterFault = false;
  for (const row of t.rows) {
    const time = `+${(row.atMs / 1000).toFixed(3)} s`;
    const marked = row.key !== undefined && focus.has(row.key);
    if (row.lane === 'fault' && row.tone === 'fault') {
      const first = !afterFault;
      afterFault = true;
      out.push(`<tr class="fault${first ? ' first' : ''}"><td class="t">${h(time)}</td><td colspan="3">⚡ ${h(row.text)}</td></tr>`);
      continue;
    }
    const cell = `<span class="tone-${row.tone}${marked ? ' mark' : ''}">${h(row.text)}</span>`;
    const lane = row.lane === 'fault' ? 'controller' : row.lane;
    const cells = ['workload', 'controller', 'cluster'].map((l) => `<td>${l === lane ? cell : ''}</td>`).join('');
    out.push(`<tr class="${afterFault ? 'after' : 'before'}"><td class="t">${h(time)}</td>${cells}</tr>`);
  }
  out.push(`</tbody></table>`);
  if (t.omitted > 0)
    out.push(`<p class="note">${t.omitted} row(s) left out (reads first, then rows far from the fault); the full traces are in the run directory.</p>`);
  return out.join('\n');
}

const CSS = `
:root { --fg:#1d1f23; --muted:#667085; --line:#e4e7ec; --bg:#fff; --soft:#f8f9fb; --red:#c0262d; --green:#18794e; --blue:#1f5fbf; --purple:#6e3fbf; --orange:#b35c00; --teal:#0f766e; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
header { padding:20px 32px 12px; border-bottom:1px solid var(--line); background:var(--soft); }
h1 { margin:0 0 4px; font-size:22px; }
h2 { font-size:18px; margin:28px 0 10px; }
h3 { font-size:15px; margin:20px 0 8px; }
h4 { font-size:13px; margin:12px 0 4px; }
main { padding:0 32px 32px; }
footer { padding:12px 32px; color:var(--muted); border-top:1px solid var(--line); font-size:12px; }
.sub { color:var(--muted); margin:0 0 10px; }
.chips { display:flex; gap:8px; flex-wrap:wrap; }
.chip { border:1px solid var(--line); border-radius:999px; padding:2px 10px; background:#fff; }
table { border-collapse:collapse; width:100%; margin:4px 0 8px; }
th, td { text-align:left; vertical-align:top; padding:4px 8px; border-bottom:1px solid var(--line); }
th { font-weight:600; color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.02em; }
td.num { text-align:right; white-space:nowrap; }
table.plans td:nth-child(1), table.plans td:nth-child(2), td.obj { white-space:nowrap; }
table.alarms td:nth-child(5) { white-space:nowrap; }
code { font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; background:var(--soft); padding:0 3px; border-radius:3px; word-break:break-word; }
.badge.contract { background:#b35900; }
.badge.f-bug { background:#b00020; } .badge.f-beyond-contract { background:#b35900; } .badge.f-flaky, .badge.f-environment, .badge.f-misoperation, .badge.f-rejected-input, .badge.f-transient { background:#6b6b6b; }
.lead { font-size:1.2em; font-weight:bold; margin:4px 0; }
.finding { border:1px solid var(--line); border-radius:6px; padding:4px 12px; margin:8px 0; background:#fff; }
.badge { display:inline-block; border-radius:4px; padding:0 7px; font-size:12px; font-weight:600; color:#fff; background:var(--muted); vertical-align:middle; }
.v-bug { background:var(--red); color:#fff; } .v-pass { background:var(--green); color:#fff; } .v-flaky { background:var(--orange); color:#fff; }
.v-not-injected, .v-workload-failed { background:#7a828e; color:#fff; } .v-error { background:#111; color:#fff; }
.chip.v-bug, .chip.v-pass, .chip.v-flaky, .chip.v-not-injected, .chip.v-workload-failed, .chip.v-error { color:#fff; border-color:transparent; }
.oracle { font-size:12px; font-weight:600; color:var(--blue); }
.flaky { font-size:11px; color:var(--orange); font-weight:600; }
tr.is-flaky td { opacity:.65; }
.note { color:var(--muted); font-style:italic; }
section.plan { border-top:3px solid var(--line); margin-top:36px; }
.where { color:var(--muted); font-weight:400; font-size:14px; }
.perturbation { font-size:15px; margin:4px 0; }
.rundir { color:var(--muted); font-size:12px; margin:0 0 6px; }
.legend { font-weight:400; color:var(--muted); font-size:12px; margin-left:8px; }
pre { margin:0; padding:8px 10px; background:var(--soft); border:1px solid var(--line); border-radius:4px; overflow-x:auto; font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; }
pre.diff .del { color:var(--red); background:#fdecec; display:inline-block; width:100%; }
pre.diff .add { color:var(--green); background:#e7f6ee; display:inline-block; width:100%; }
pre.diff .ctx { color:#444; }
.legend .del { color:var(--red); } .legend .add { color:var(--green); }
table.timeline { font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; table-layout:fixed; }
table.timeline th { font-family:system-ui,sans-serif; }
table.timeline td { padding:2px 8px; border-bottom:1px solid #f0f2f5; word-break:break-word; }
table.timeline th.t, table.timeline td.t { width:90px; color:var(--muted); white-space:nowrap; }
table.timeline th:nth-child(2) { width:24%; } table.timeline th:nth-child(3) { width:40%; }
tr.after td { background:#fffdf7; }
tr.fault td { background:#fde8e8; color:var(--red); font-weight:700; border-top:2px solid var(--red); border-bottom:2px solid var(--red); }
.fault-legend { color:var(--red); font-weight:700; }
.tone-read { color:#8a919c; } .tone-write { color:var(--blue); } .tone-shown { color:var(--purple); }
.tone-error { color:var(--red); font-weight:700; } .tone-process { color:var(--orange); font-weight:600; }
.tone-step { color:var(--green); font-weight:600; } .tone-change { color:var(--teal); } .tone-note { color:var(--muted); }
.mark { background:#fff3b0; font-weight:700; padding:0 2px; border-radius:2px; }
details { margin-top:12px; } summary { cursor:pointer; color:var(--muted); }
a { color:var(--blue); }
`;
