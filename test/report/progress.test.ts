import test from 'ava';
import { ProgressReporter, formatEta } from '../../src/report/progress.js';
import type { PlanResult } from '../../src/model/results.js';
import { COLOURED } from '../../src/report/color.js';

const result = (plan: string, verdict: PlanResult['verdict']): PlanResult => ({
  plan,
  controller: 'c',
  workload: 'w',
  pattern: 'intermediate-state',
  description: 'd',
  verdict,
  injected: true,
  alarms: verdict === 'bug' ? [{ oracle: 'end-state', object: 'x', reference: [], test: 1, message: 'm' }] : [],
  durationMs: 10,
  runDir: '/r',
});

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { chunks, stream: { isTTY, columns: 80, write: (s: string) => chunks.push(s) } };
}

test('off a terminal: one plain line per finished plan with done/total, bugs so far and an ETA', (t) => {
  const { chunks, stream } = sink(false);
  let now = 0;
  const p = new ProgressReporter(stream, () => now);
  p.begin(4);
  p.planStarted('p1: restart ...');
  now = 10_000;
  p.planFinished(result('p1', 'bug'));
  now = 20_000;
  p.planFinished(result('p2', 'pass'));
  p.log('a log line');
  t.deepEqual(chunks, [
    '  -> p1: bug (1 alarm(s)); 1/4 plans, 1 bug(s) so far, ETA 30 s\n',
    '  -> p2: pass; 2/4 plans, 1 bug(s) so far, ETA 20 s\n',
    'a log line\n',
  ]);
  t.false(chunks.join('').includes('\r'), 'no control characters in logs');
});

test('on a terminal: one status line updated in place, log lines printed above it', (t) => {
  const { chunks, stream } = sink(true);
  let now = 0;
  const p = new ProgressReporter(stream, () => now);
  p.begin(3);
  p.planStarted('p1: restart the controller right after it creates ConfigMap/default/a (1st time) and a very long tail that must be cut');
  now = 60_000;
  p.planFinished(result('p1', 'bug'));
  p.log('fault fired');
  p.end();
  const out = chunks.join('');
  t.true(out.includes('\r\x1b[2K[1/3 plans, 1 bug(s) so far, ETA 2 min 00 s]'));
  t.true(out.includes('\r\x1b[2Kfault fired\n'), 'the status line is cleared before a log line');
  for (const c of chunks.filter((x) => x.startsWith('\r\x1b[2K['))) t.true(c.length - 5 <= 79, 'the status line fits the terminal');
  t.true(out.endsWith('\r\x1b[2K'), 'end() clears the status line');
});

test('ETA formatting', (t) => {
  t.is(formatEta(4_400), '4 s');
  t.is(formatEta(125_000), '2 min 05 s');
  t.is(formatEta(3_780_000), '1 h 03 min');
});

test('on a terminal, with plans running at once: how many run, the newest, and a finished one leaves the line', (t) => {
  const { chunks, stream } = sink(true);
  const p = new ProgressReporter(stream, () => 0);
  p.begin(3);
  p.planStarted('p1: one');
  p.planStarted('p2: two');
  t.true(chunks.at(-1)!.endsWith('2 running, newest: p2: two'));
  p.planFinished(result('p2', 'pass'));
  t.true(chunks.at(-1)!.endsWith('] p1: one'), 'the plan still running is shown');
  p.planFinished(result('p1', 'pass'));
  t.true(chunks.at(-1)!.endsWith(']'), 'nothing is running');
});

const bugWithRerun = (): PlanResult => ({
  ...result('p1', 'bug'),
  description: 'restart after the create',
  planFile: 'plans/p1.yaml',
  configFile: 'kperturb.yaml',
});

test('on a terminal: a bug is named the moment its plan finishes, with its first alarm and the command that runs it again', (t) => {
  const { chunks, stream } = sink(true);
  const p = new ProgressReporter(stream, () => 0);
  p.begin(2);
  p.planStarted('p1: restart after the create');
  p.planFinished(bugWithRerun());
  const out = chunks.join('');
  t.true(out.includes('bug found by c/w/p1: restart after the create\n  [end-state] m\n  kperturb test plans/p1.yaml -c kperturb.yaml\n'), out);
  p.planFinished(result('p2', 'pass'));
  t.false(chunks.join('').includes('p2: pass'), 'a pass only moves the status line');
});

test('--quiet: no status line, no log lines and no passes; bugs and warnings are still printed', (t) => {
  for (const tty of [true, false]) {
    const { chunks, stream } = sink(tty);
    const p = new ProgressReporter(stream, () => 0, { verbosity: 'quiet' });
    p.begin(2);
    p.log('learning...');
    p.planStarted('p2: x');
    p.planFinished(result('p2', 'pass'));
    p.warn('warning: w');
    p.planFinished(bugWithRerun());
    p.end();
    const out = chunks.join('');
    t.false(out.includes('\r'), 'no status line');
    t.false(out.includes('learning'));
    t.false(out.includes('p2'));
    t.true(out.startsWith('warning: w\nbug found by c/w/p1'), out);
  }
});

test('--verbose: each finished plan with its perturbation, run directory and alarms, on and off a terminal', (t) => {
  for (const tty of [true, false]) {
    const { chunks, stream } = sink(tty);
    const p = new ProgressReporter(stream, () => 0, { verbosity: 'verbose' });
    p.begin(2);
    p.planFinished({ ...result('p2', 'pass'), description: 'hold the pod' });
    const out = chunks.join('');
    t.true(out.includes('  -> p2: pass; 1/2 plans'), out);
    t.true(out.includes('     hold the pod\n     run: /r'), out);
  }
});

test('colour only where asked for: bug lines painted with a palette, none by default', (t) => {
  const painted = sink(true);
  new ProgressReporter(painted.stream, () => 0, { palette: COLOURED }).planFinished(bugWithRerun());
  t.true(painted.chunks.join('').includes('\x1b[31mbug\x1b[39m found by'));
  const plain = sink(true);
  new ProgressReporter(plain.stream, () => 0).planFinished(bugWithRerun());
  t.false(
    plain.chunks
      .join('')
      .replace(/\r\x1b\[2K/g, '')
      .includes('\x1b'),
  );
});
