/**
 * Exec and log rules (kperturb.yaml `exec:` and `logs:`): what `pods/exec`, `pods/attach` and
 * `pods/log` answer. There are no real containers behind kperturb's kubelets (simulated, or absent on
 * the real control plane), so whoever answers these calls (the proxy for the controller, the embedded
 * cluster for kubectl) looks the call up here: the first rule that matches gives the exit code and
 * output; no match means success with empty output, as a command that prints nothing would.
 */

export interface ExecRule {
  /** Glob on the namespace (`*` matches any characters); any namespace when absent. */
  namespace?: string;
  /** Glob on the pod name. */
  pod?: string;
  /** Glob on the container name (the one the call names, or the pod's only container). */
  container?: string;
  /**
   * The argv, element by element: each element is a glob on one argument, except an element that is
   * exactly `*`, which matches any number of arguments (none included). `[rabbitmqctl, "*"]` matches
   * every rabbitmqctl call; `[sh, -c, "rabbitmqctl *"]` a shell script that starts with it.
   */
  command?: string[];
  /** A substring of the argv joined by single spaces. */
  commandContains?: string;
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface LogRule {
  namespace?: string;
  pod?: string;
  container?: string;
  /** The log text, as the container would have written it. */
  text: string;
}

export interface PodStreamingRules {
  exec: ExecRule[];
  logs: LogRule[];
}

export const NO_POD_STREAMING_RULES: PodStreamingRules = { exec: [], logs: [] };

/** One exec (or attach, whose command is empty) to answer. */
export interface ExecCall {
  namespace: string;
  pod: string;
  container: string;
  command: string[];
}

/** What a call answers; `rule` is the index of the rule that matched (absent: the default). */
export interface ExecAnswer {
  exitCode: number;
  stdout: string;
  stderr: string;
  rule?: number;
}

export interface LogAnswer {
  text: string;
  rule?: number;
}

/** `*` matches any run of characters (`/` included: names have none); everything else is literal. */
export function globMatches(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === text;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = text.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/** See ExecRule.command. */
export function commandMatches(pattern: readonly string[], argv: readonly string[]): boolean {
  const match = (p: number, a: number): boolean => {
    if (p === pattern.length) return a === argv.length;
    if (pattern[p] === '*') {
      for (let skip = a; skip <= argv.length; skip++) if (match(p + 1, skip)) return true;
      return false;
    }
    return a < argv.length && globMatches(pattern[p]!, argv[a]!) && match(p + 1, a + 1);
  };
  return match(0, 0);
}

function targetMatches(rule: { namespace?: string; pod?: string; container?: string }, namespace: string, pod: string, container: string): boolean {
  return (
    (rule.namespace === undefined || globMatches(rule.namespace, namespace)) &&
    (rule.pod === undefined || globMatches(rule.pod, pod)) &&
    (rule.container === undefined || globMatches(rule.container, container))
  );
}

export function execRuleMatches(rule: ExecRule, call: ExecCall): boolean {
  if (!targetMatches(rule, call.namespace, call.pod, call.container)) return false;
  if (rule.command !== undefined && !commandMatches(rule.command, call.command)) return false;
  if (rule.commandContains !== undefined && !call.command.join(' ').includes(rule.commandContains)) return false;
  return true;
}

/** The first matching rule's answer, else success with empty output. */
export function answerExec(rules: readonly ExecRule[], call: ExecCall): ExecAnswer {
  const index = rules.findIndex((r) => execRuleMatches(r, call));
  if (index < 0) return { exitCode: 0, stdout: '', stderr: '' };
  const r = rules[index]!;
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr, rule: index };
}

export function answerLog(rules: readonly LogRule[], call: { namespace: string; pod: string; container: string }): LogAnswer {
  const index = rules.findIndex((r) => targetMatches(r, call.namespace, call.pod, call.container));
  if (index < 0) return { text: '' };
  return { text: rules[index]!.text, rule: index };
}
