import test from 'ava';
import { controllerEnvironment, expandVariableReferences } from '../../src/config/var-expansion.js';

const vars: Record<string, string> = { A: 'a', KUBECONFIG: '/run/kc' };
const lookup = (n: string) => vars[n];

test('$(VAR) expands as Kubernetes expands container env and args', (t) => {
  t.is(expandVariableReferences('$(KUBECONFIG)', lookup), '/run/kc');
  t.is(expandVariableReferences('x-$(A)-$(A)', lookup), 'x-a-a');
  t.is(expandVariableReferences('$(UNDEFINED)', lookup), '$(UNDEFINED)', 'an undefined reference stays as written');
  t.is(expandVariableReferences('$$(A)', lookup), '$(A)', '$$ escapes');
  t.is(expandVariableReferences('cost $5 $(A', lookup), 'cost $5 $(A', 'a lone $ and an unterminated reference stay');
  t.is(expandVariableReferences('$', lookup), '$');
});

test("the controller environment: env values see KUBECONFIG and earlier entries, args see all; KUBECONFIG stays the proxy's", (t) => {
  const { env, args } = controllerEnvironment(
    { HOME: '/root', KUBECONFIG: '/home/u/.kube/config' },
    { KUBE_CONFIG: '$(KUBECONFIG)', B: '$(KUBE_CONFIG).bak', KUBECONFIG: '/elsewhere' },
    ['--kubeconfig=$(KUBECONFIG)', '--home=$(HOME)', '$(NOPE)'],
    '/run/proxy.kubeconfig',
  );
  t.is(env.KUBE_CONFIG, '/run/proxy.kubeconfig');
  t.is(env.B, '/run/proxy.kubeconfig.bak');
  t.is(env.KUBECONFIG, '/run/proxy.kubeconfig');
  t.is(env.HOME, '/root');
  t.deepEqual(args, ['--kubeconfig=/run/proxy.kubeconfig', '--home=/root', '$(NOPE)']);
});
