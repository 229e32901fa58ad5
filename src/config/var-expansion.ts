/**
 * `$(VAR)` references in the controller's args and env, expanded as Kubernetes expands them in a
 * container's command, args and env (k8s.io/kubernetes third_party/forked/golang/expansion): a
 * reference to a defined variable is replaced by its value, one to an undefined variable is left
 * as written, and `$$` is an escaped `$`. So `env: { KUBE_CONFIG: $(KUBECONFIG) }` hands an operator
 * that reads a second kubeconfig variable the proxy's kubeconfig, as a Pod spec would.
 */

/** Expands `$(NAME)` in `input` with `lookup`; an undefined name stays `$(NAME)`. */
export function expandVariableReferences(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c !== '$' || i + 1 >= input.length) {
      out += c;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        // An unterminated reference is kept as written.
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = lookup(name);
      out += value ?? `$(${name})`;
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

/**
 * The controller's environment: the config's `env` in order, each value expanded against the
 * variables before it, KUBECONFIG and kperturb's own environment, then its args expanded against all
 * of them.
 */
export function controllerEnvironment(
  base: Record<string, string | undefined>,
  env: Record<string, string>,
  args: readonly string[],
  kubeconfig: string,
): { env: Record<string, string | undefined>; args: string[] } {
  const result: Record<string, string | undefined> = { ...base, KUBECONFIG: kubeconfig };
  for (const [name, value] of Object.entries(env)) {
    result[name] = expandVariableReferences(value, (n) => result[n]);
  }
  // KUBECONFIG is kperturb's to set: a config that names it still gets the proxy's.
  result.KUBECONFIG = kubeconfig;
  return { env: result, args: args.map((a) => expandVariableReferences(a, (n) => result[n])) };
}
