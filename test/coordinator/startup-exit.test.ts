/**
 * A controller that exits during start-up: the run's error shows its exit, the last lines it
 * printed (a Go panic from its first line) and, when those lines show one, the likely cause in
 * kperturb.yaml's terms (a missing environment variable, a port in use, a pods/exec answer).
 */
import test from 'ava';
import { chmodSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { learn } from '../../src/campaign/campaign.js';
import { validateConfig, type ControllerUnderTest } from '../../src/config/config.js';
import { describeStartupExit } from '../../src/coordinator/startup-exit.js';
import { scratchDir } from '../_scratch-dir.js';

const FILE = '/ops/kperturb.yaml';

function config(controller: Partial<ControllerUnderTest['controller']> = {}): ControllerUnderTest {
  const c = validateConfig(
    {
      apiVersion: 'kperturb.dev/v1',
      kind: 'ControllerUnderTest',
      metadata: { name: 'x' },
      controller: { command: 'true' },
      workloads: { w: { steps: [{ sleep: 0 }] } },
    },
    join(tmpdir(), 'kperturb.yaml'),
  );
  return { ...c, file: FILE, controller: { ...c.controller, ...controller } };
}

/** What the message shows of GO_PANIC (the blank line dropped). */
const PANIC_SHOWN = [
  'the controller exited during start-up, before it went quiet (exit code 2); the last lines it printed (controller.log):',
  '  panic: WATCH_NAMESPACE must be set',
  '  goroutine 1 [running]:',
  '  main.main()',
  '  \t/src/cmd/manager/main.go:42 +0x1d',
  '  exit status 2',
];
const GO_PANIC = ['panic: WATCH_NAMESPACE must be set', '', 'goroutine 1 [running]:', 'main.main()', '\t/src/cmd/manager/main.go:42 +0x1d', 'exit status 2'];

test('a Go panic naming an environment variable: the panic and controller.env.X', (t) => {
  t.is(
    describeStartupExit(config(), { code: 2, signal: null }, ['starting manager', ...GO_PANIC]),
    [...PANIC_SHOWN, `likely cause: it needs the environment variable WATCH_NAMESPACE: set controller.env.WATCH_NAMESPACE in ${FILE}`].join('\n'),
  );
});

test('an error logged as JSON naming a variable already set: check its value', (t) => {
  const line = '{"level":"error","msg":"failed to get watch namespace","error":"env var OPERATOR_NAME not set"}';
  t.is(
    describeStartupExit(config({ env: { OPERATOR_NAME: '' } }), { code: 1, signal: null }, [line]),
    [
      'the controller exited during start-up, before it went quiet (exit code 1); the last lines it printed (controller.log):',
      `  ${line}`,
      `likely cause: it needs the environment variable OPERATOR_NAME: check the value of controller.env.OPERATOR_NAME in ${FILE}`,
    ].join('\n'),
  );
});

test('a port in use: controller.ports and maxParallel, or the flag that turns the listener off', (t) => {
  const line = '{"level":"error","msg":"unable to start manager","error":"error listening on :8080: listen tcp :8080: bind: address already in use"}';
  t.is(
    describeStartupExit(config(), { code: 1, signal: null }, [line]).split('\n').at(-1),
    `likely cause: port 8080 is taken (another program, or another run of this controller at the same time): in ${FILE} set controller.ports: [8080] and controller.maxParallel: 1 so runs take turns, or turn the listener off with the controller's flag (controller-runtime: --metrics-bind-address=0, --health-probe-bind-address=0)`,
  );
  t.is(
    describeStartupExit(config({ ports: [9090] }), { code: 1, signal: null }, ['Error: listen EADDRINUSE: address already in use 127.0.0.1:9090'])
      .split('\n')
      .at(-1),
    "likely cause: port 9090 is taken by another program on this machine (it is in controller.ports, so no other run of this controller holds it): stop that program, or turn the listener off with the controller's flag (controller-runtime: --metrics-bind-address=0, --health-probe-bind-address=0)",
  );
});

test('a pods/exec call in the last lines: an exec: rule', (t) => {
  t.is(
    describeStartupExit(config(), { code: 2, signal: null }, [
      'E0101 remotecommand.go:120] exec in pod db-0 returned no rows',
      'panic: runtime error: index out of range [0] with length 0',
    ])
      .split('\n')
      .at(-1),
    `likely cause: it ran a command in a pod (pods/exec), which kperturb answers with empty output and exit code 0 unless a rule says otherwise: add an exec: rule to ${FILE} with the output the controller expects (docs/cli.md, "Commands in pods")`,
  );
});

test('nothing printed, or nothing recognised: the exit alone', (t) => {
  t.is(
    describeStartupExit(config(), { code: null, signal: 'SIGSEGV' }, []),
    'the controller exited during start-up, before it went quiet (killed by SIGSEGV), printing nothing (see controller.log)',
  );
  t.is(
    describeStartupExit(config(), { code: 3, signal: null }, ['bye']),
    'the controller exited during start-up, before it went quiet (exit code 3); the last lines it printed (controller.log):\n  bye',
  );
});

test('learn: a controller that panics at start fails its reference run with the panic and the likely cause', async (t) => {
  const dir = scratchDir(t, 'kperturb-startup-exit-');
  const script = join(dir, 'manager.sh');
  writeFileSync(script, `#!/bin/sh\necho "starting manager"\nprintf '${GO_PANIC.join('\\n')}\\n' >&2\nexit 2\n`);
  chmodSync(script, 0o755);
  const c = { ...config({ command: script, workingDir: dir }), file: join(dir, 'kperturb.yaml'), referenceRuns: 1 };
  const [summary] = await learn(c, { out: join(dir, 'out'), log: () => undefined });
  t.is(
    summary!.runs[0]!.error,
    [
      ...PANIC_SHOWN,
      `likely cause: it needs the environment variable WATCH_NAMESPACE: set controller.env.WATCH_NAMESPACE in ${join(dir, 'kperturb.yaml')}`,
    ].join('\n'),
  );
});
