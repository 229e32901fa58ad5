/**
 * APIs a controller author's manifests and kubectl sessions use beyond workloads: networking.k8s.io,
 * discovery.k8s.io EndpointSlice, autoscaling HPAs (v2, and v1 as kubectl autoscale writes them),
 * and `kubectl auth can-i` (authorization.k8s.io self-reviews).
 */
import test from 'ava';
import { applyCrds, exampleCrd, kubectlFor, ok } from './kubectl-helper.js';

test('kubectl auth can-i answers yes (RBAC is not enforced), also with --list', async (t) => {
  const kubectl = await kubectlFor(t);
  t.is((await ok(t, kubectl, 'auth', 'can-i', 'create', 'deployments', '-n', 'default')).trim(), 'yes');
  t.is((await ok(t, kubectl, 'auth', 'can-i', 'delete', 'nodes')).trim(), 'yes');
  t.regex(await ok(t, kubectl, 'auth', 'can-i', '--list'), /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
});

test('kubectl applies and lists Ingress, IngressClass, NetworkPolicy, EndpointSlice and HPAs with their columns', async (t) => {
  const kubectl = await kubectlFor(t);
  const manifests = kubectl.file(
    'net.yaml',
    `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: nginx
  rules:
  - host: example.com
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny}
spec: {podSelector: {matchLabels: {app: web}}, policyTypes: [Ingress]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 80, protocol: TCP}]
endpoints: [{addresses: ["10.244.0.5"]}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
  metrics: [{type: Resource, resource: {name: memory, target: {type: Utilization, averageUtilization: 70}}}]
`,
  );
  const applied = await ok(t, kubectl, 'apply', '-f', manifests);
  for (const created of [
    'ingressclass.networking.k8s.io/nginx',
    'ingress.networking.k8s.io/web',
    'networkpolicy.networking.k8s.io/deny',
    'endpointslice.discovery.k8s.io/web-abc',
    'horizontalpodautoscaler.autoscaling/web',
  ]) {
    t.true(applied.includes(`${created} created`), applied);
  }
  t.regex(await ok(t, kubectl, 'get', 'ing'), /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\nweb\s+nginx\s+example\.com\s+80\s+\d+s\n$/);
  t.regex(await ok(t, kubectl, 'get', 'ingressclass'), /^NAME\s+CONTROLLER\s+PARAMETERS\s+AGE\nnginx\s+k8s\.io\/ingress-nginx\s+<none>\s+\d+s\n$/);
  t.regex(await ok(t, kubectl, 'get', 'netpol'), /^NAME\s+POD-SELECTOR\s+AGE\ndeny\s+app=web\s+\d+s\n$/);
  t.regex(await ok(t, kubectl, 'get', 'endpointslices'), /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE\nweb-abc\s+IPv4\s+80\s+10\.244\.0\.5\s+\d+s\n$/);

  // kubectl autoscale writes autoscaling/v1; the object reads back in v2 with the cpu metric.
  await ok(t, kubectl, 'create', 'deployment', 'api', '--image=nginx');
  t.regex(
    await ok(t, kubectl, 'autoscale', 'deployment', 'api', '--cpu-percent=80', '--min=1', '--max=3'),
    /horizontalpodautoscaler.autoscaling\/api autoscaled/,
  );
  const hpas = await ok(t, kubectl, 'get', 'hpa');
  t.regex(hpas, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\n/);
  t.regex(hpas, /^api\s+Deployment\/api\s+cpu: <unknown>\/80%\s+1\s+3\s+0\s+\d+s$/m);
  t.regex(hpas, /^web\s+Deployment\/web\s+memory: <unknown>\/70%\s+2\s+5\s+0\s+\d+s$/m);
  const v2 = JSON.parse(await ok(t, kubectl, 'get', 'hpa', 'api', '-o', 'json'));
  t.like(v2, { apiVersion: 'autoscaling/v2', spec: { minReplicas: 1, maxReplicas: 3 } });
  t.deepEqual(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);

  const resources = await ok(t, kubectl, 'api-resources', '--no-headers');
  for (const line of [
    /^ingresses\s+ing\s+networking\.k8s\.io\/v1\s+true\s+Ingress$/m,
    /^endpointslices\s+discovery\.k8s\.io\/v1\s+true\s+EndpointSlice$/m,
    /^horizontalpodautoscalers\s+hpa\s+autoscaling\/v2\s+true\s+HorizontalPodAutoscaler$/m,
    /^selfsubjectaccessreviews\s+authorization\.k8s\.io\/v1\s+false\s+SelfSubjectAccessReview$/m,
  ]) {
    t.regex(resources, line);
  }
});

test('kubectl explain shows a CRD version schema: fields, types and descriptions', async (t) => {
  const kubectl = await kubectlFor(t);
  await applyCrds(
    t,
    kubectl,
    exampleCrd(
      'Widget',
      'widgets',
      'Namespaced',
      `
    schema:
      openAPIV3Schema:
        type: object
        description: A widget.
        properties:
          spec:
            type: object
            description: What the widget should be.
            properties:
              size: {type: integer, description: How big the widget is.}`,
    ),
  );
  const spec = await ok(t, kubectl, 'explain', 'widgets.spec');
  t.regex(spec, /^KIND:\s+Widget$/m);
  t.regex(spec, /DESCRIPTION:\n\s+What the widget should be\./);
  t.regex(spec, /^\s+size\s+<integer>\n\s+How big the widget is\.$/m);
  t.regex(await ok(t, kubectl, 'explain', 'widget', '--recursive'), /^\s+spec\s+<Object>\n\s+size\s+<integer>$/m);
});
