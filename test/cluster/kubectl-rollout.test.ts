/** kubectl rollout undo on the embedded cluster: the Deployment goes back to revision 1's ReplicaSet. */
import test from 'ava';
import { kubectlFor, ok } from './kubectl-helper.js';

test('kubectl rollout undo reuses the first revision ReplicaSet of an applied Deployment', async (t) => {
  const kubectl = await kubectlFor(t, { simulation: {} });
  // kubectl apply sends no template creationTimestamp; rollout undo copies the ReplicaSet's
  // template back, which carries `creationTimestamp: null` as every Go client writes it.
  const manifest = kubectl.file(
    'app.yaml',
    `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: c, image: "nginx:1.26"}]
`,
  );
  await ok(t, kubectl, 'apply', '-f', manifest);
  await ok(t, kubectl, 'rollout', 'status', 'deployment/app', '--timeout=90s');
  const first = (await ok(t, kubectl, 'get', 'rs', '-l', 'app=app', '-o', 'jsonpath={.items[0].metadata.name}')).trim();
  await ok(t, kubectl, 'set', 'image', 'deployment/app', 'c=nginx:1.27');
  await ok(t, kubectl, 'rollout', 'status', 'deployment/app', '--timeout=90s');
  t.regex(await ok(t, kubectl, 'rollout', 'undo', 'deployment/app'), /deployment.apps\/app rolled back/);
  await ok(t, kubectl, 'rollout', 'status', 'deployment/app', '--timeout=90s');

  const names = (await ok(t, kubectl, 'get', 'rs', '-l', 'app=app', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.replicas}{"\\n"}{end}'))
    .trim()
    .split('\n')
    .sort();
  t.is(names.length, 2, `no third ReplicaSet: ${names.join(', ')}`);
  t.true(names.includes(`${first}=1`), `revision 1's ReplicaSet ${first} runs again: ${names.join(', ')}`);
  const history = await ok(t, kubectl, 'rollout', 'history', 'deployment/app');
  t.regex(history, /^2\s+<none>\n3\s+<none>\s*$/m, 'revision 1 became revision 3, as kube-controller-manager renumbers it');
  t.is((await ok(t, kubectl, 'get', 'deployment', 'app', '-o', 'jsonpath={.spec.template.spec.containers[0].image}')).trim(), 'nginx:1.26');
});
