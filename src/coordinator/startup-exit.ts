/**
 * What a run says when the controller exits during start-up, before it went quiet: its exit, the
 * last lines it printed (the Go panic or the error it logged), and, when those lines show one, the
 * likely cause in kperturb.yaml's terms: an environment variable it needs (WATCH_NAMESPACE must be
 * set), a port another process holds (bind: address already in use), a command it ran in a pod.
 * A new user otherwise reads "the controller exited" and has to open controller.log to learn why.
 */
import type { ControllerUnderTest } from '../config/config.js';

/** How many of the controller's last lines a run keeps in memory for this message. */
export const KEPT_LINES = 200;
const SHOWN_LINES = 8;
const SHOWN_CHARS = 300;

export interface StartupExit {
  code: number | null;
  signal: string | null;
}

export function describeStartupExit(config: ControllerUnderTest, exit: StartupExit | undefined, lines: readonly string[]): string {
  const how = exit?.signal ? `killed by ${exit.signal}` : exit?.code !== undefined && exit.code !== null ? `exit code ${exit.code}` : undefined;
  const shown = linesToShow(lines);
  const parts = [`the controller exited during start-up, before it went quiet${how ? ` (${how})` : ''}`];
  parts[0] += shown.length > 0 ? '; the last lines it printed (controller.log):' : ', printing nothing (see controller.log)';
  for (const line of shown) parts.push(`  ${line.length > SHOWN_CHARS ? line.slice(0, SHOWN_CHARS) + '...' : line}`);
  const cause = likelyCause(config, lines);
  if (cause) parts.push(`likely cause: ${cause}`);
  return parts.join('\n');
}

/** A Go panic from its first line (the rest is goroutine stacks), else the last lines. */
function linesToShow(lines: readonly string[]): string[] {
  const nonEmpty = lines.filter((l) => l.trim() !== '');
  let panicAt = -1;
  nonEmpty.forEach((l, i) => {
    if (/^(panic: |fatal error: )/.test(l)) panicAt = i;
  });
  return panicAt >= 0 ? nonEmpty.slice(panicAt, panicAt + SHOWN_LINES) : nonEmpty.slice(-SHOWN_LINES);
}

/** An environment variable's name: capitals, digits and at least one underscore (WATCH_NAMESPACE). */
const ENV_NAME = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g;
const ENV_MISSING =
  /must be (set|defined|specified)|(is )?not (set|defined|specified|found)|\bunset\b|is required|is empty|\bmissing\b|env(ironment)?[ _-]?var/i;
const IN_CLUSTER = ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'];
const EXEC = /pods?\/exec|remotecommand|unable to upgrade connection|command terminated with exit code/i;

function likelyCause(config: ControllerUnderTest, lines: readonly string[]): string | undefined {
  const file = config.file;
  const port = portInUse(lines);
  if (port !== undefined) {
    if (config.controller.ports.includes(port)) {
      return `port ${port} is taken by another program on this machine (it is in controller.ports, so no other run of this controller holds it): stop that program, or turn the listener off with the controller's flag (controller-runtime: --metrics-bind-address=0, --health-probe-bind-address=0)`;
    }
    return `port ${port} is taken (another program, or another run of this controller at the same time): in ${file} set controller.ports: [${port}] and controller.maxParallel: 1 so runs take turns, or turn the listener off with the controller's flag (controller-runtime: --metrics-bind-address=0, --health-probe-bind-address=0)`;
  }
  const names = new Set<string>();
  for (const line of lines) if (ENV_MISSING.test(line)) for (const m of line.matchAll(ENV_NAME)) names.add(m[0]);
  if (IN_CLUSTER.some((n) => names.has(n))) {
    return `it looked for the in-cluster configuration (${IN_CLUSTER.join(', ')}) instead of reading KUBECONFIG: make it take the kubeconfig kperturb sets, e.g. add "--kubeconfig=$(KUBECONFIG)" to controller.args in ${file}`;
  }
  if (names.size > 0) {
    const list = [...names];
    const set = list.filter((n) => n in config.controller.env);
    const unset = list.filter((n) => !(n in config.controller.env));
    const said = [
      unset.length > 0 ? `set ${unset.map((n) => `controller.env.${n}`).join(', ')} in ${file}` : undefined,
      set.length > 0 ? `check the value of ${set.map((n) => `controller.env.${n}`).join(', ')} in ${file}` : undefined,
    ].filter(Boolean);
    return `it needs the environment variable${list.length > 1 ? 's' : ''} ${list.join(', ')}: ${said.join('; ')}`;
  }
  if (lines.some((l) => EXEC.test(l))) {
    return `it ran a command in a pod (pods/exec), which kperturb answers with empty output and exit code 0 unless a rule says otherwise: add an exec: rule to ${file} with the output the controller expects (docs/cli.md, "Commands in pods")`;
  }
  return undefined;
}

function portInUse(lines: readonly string[]): number | undefined {
  for (const line of lines) {
    // Go: `listen tcp :8080: bind: address already in use`; Node: `listen EADDRINUSE: address already in use :::8080`.
    const m = /:(\d{1,5}): bind: address already in use/.exec(line) ?? /address already in use\s+\S*:(\d{1,5})\b/.exec(line);
    const port = Number(m?.[1]);
    if (Number.isInteger(port) && port > 0 && port < 65536) return port;
  }
  return undefined;
}
