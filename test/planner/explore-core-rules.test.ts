/** kperturb explore: values kube-apiserver refuses in the core types a CRD embeds are not generated (weight 0, `tolerations: [{}]`, free strings for enums). */
import test from 'ava';
import { applyCoreRules, CORE_RULES, generateExploration, parseSchema, type ExploreStep } from '../../planner/explore/index.js';
import { builtinV2Definitions } from '../../src/cluster/openapi-builtin.js';

const definitions = builtinV2Definitions(Object.keys(CORE_RULES));

/** Shaped as controller-gen writes core types of an older Kubernetes: fewer properties than today's definitions. */
/** Today's PodSpec as an older Kubernetes' CRD copies it: its scalar properties, without some newer ones. */
const podSpecDef = definitions['io.k8s.api.core.v1.PodSpec']!.properties as Record<string, { type?: string }>;
const podSpec = {
  type: 'object',
  properties: Object.fromEntries(
    Object.entries(podSpecDef)
      .filter(([k, v]) => ['string', 'integer', 'boolean'].includes(v.type ?? '') && !['hostUsers', 'schedulerName'].includes(k))
      .map(([k, v]) => [k, { type: v.type }]),
  ),
};
const podAffinityTerm = {
  type: 'object',
  required: ['topologyKey'],
  properties: { topologyKey: { type: 'string' }, namespaces: { type: 'array', items: { type: 'string' } } },
};
const schema = parseSchema({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        affinity: {
          type: 'object',
          properties: {
            podAntiAffinity: {
              type: 'object',
              properties: {
                preferredDuringSchedulingIgnoredDuringExecution: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['podAffinityTerm', 'weight'],
                    properties: { podAffinityTerm, weight: { type: 'integer', format: 'int32' } },
                  },
                },
              },
            },
          },
        },
        tolerations: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              effect: { type: 'string' },
              key: { type: 'string' },
              operator: { type: 'string' },
              tolerationSeconds: { type: 'integer' },
              value: { type: 'string' },
            },
          },
        },
        podSpec,
        ports: {
          type: 'array',
          items: { type: 'object', required: ['port'], properties: { name: { type: 'string' }, port: { type: 'integer' }, protocol: { type: 'string' } } },
        },
        // Not a core type: a weight of the operator's own, which may be 0.
        ranking: { type: 'object', properties: { weight: { type: 'integer' }, label: { type: 'string' } } },
      },
    },
  },
});
const seed = {
  apiVersion: 'demo.kperturb.dev/v1',
  kind: 'Db',
  metadata: { name: 'd', namespace: 'default' },
  spec: { podSpec: { dnsPolicy: 'ClusterFirst' } },
};

function steps(coreRules: Record<string, unknown> | undefined): ExploreStep[] {
  const campaign = generateExploration({ targets: [{ schema, kind: 'Db', seeds: [seed] }], seed: 1, maxSteps: 4, ...(coreRules ? { coreRules } : {}) });
  return campaign.sequences.flatMap((s) => s.steps);
}

test('a pushed preferred affinity term gets a weight in 1-100, a pushed toleration operator Exists, a pushed Service port a port and a name', (t) => {
  const all = steps(definitions);
  const push = (property: string) => all.find((s) => s.operation === 'array-push' && s.property === property)?.value as Array<Record<string, unknown>>;
  const term = push('spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution').at(-1)!;
  t.true((term.weight as number) >= 1 && (term.weight as number) <= 100, `weight ${String(term.weight)}`);
  t.deepEqual(push('spec.tolerations').at(-1), { operator: 'Exists' });
  const port = push('spec.ports').at(-1)!;
  t.true((port.port as number) >= 1);
  t.is(typeof port.name, 'string');
});

test('a string of a core type that takes a few values gets those values, not a marker; an object that is no core type keeps its own constraints', (t) => {
  const all = steps(definitions);
  const dns = all.filter((s) => s.property === 'spec.podSpec.dnsPolicy' && s.value !== undefined).map((s) => s.value);
  t.true(dns.length > 0);
  for (const v of dns) t.true(['ClusterFirstWithHostNet', 'Default'].includes(v as string), String(v));
  t.deepEqual(
    all.filter((s) => s.property === 'spec.podSpec.restartPolicy' && s.value !== undefined).map((s) => s.value),
    ['Always'],
  );
  const node = applyCoreRules(schema, definitions).properties!.get('spec')!;
  t.is(node.properties!.get('ranking')!.properties!.get('weight')!.minimum, undefined);
  t.deepEqual(
    node.properties!.get('podSpec')!.properties!.get('nodeName'),
    schema.properties!.get('spec')!.properties!.get('podSpec')!.properties!.get('nodeName'),
  );
});

test('without the definitions the schema is generated from as the CRD gives it', (t) => {
  t.is(applyCoreRules(schema, {}), schema);
  const term = steps(undefined).find((s) => s.property === 'spec.tolerations' && s.operation === 'array-push')!.value as unknown[];
  t.deepEqual(term.at(-1), {});
});
