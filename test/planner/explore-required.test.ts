/** kperturb explore: objects a step creates carry the properties their schemas require (issue 33, rbop-928, cass-operator's refused steps). */
import test from 'ava';
import {
  FILLER_IMAGE,
  fillRequired,
  generateExploration,
  getAt,
  minimalValue,
  parseSchema,
  rollbackSequence,
  SeededRandom,
  setAt,
  type SchemaNode,
} from '../../planner/explore/index.js';

/** Shaped as controller-gen writes an embedded PodTemplateSpec: PodSpec requires `containers`, a Container its `name`. */
const container = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string' },
    image: { type: 'string' },
    ports: { type: 'array', items: { type: 'object', required: ['containerPort'], properties: { containerPort: { type: 'integer' } } } },
  },
};
const schema = parseSchema({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        override: {
          type: 'object',
          properties: {
            statefulSet: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['serviceName'],
                  properties: {
                    serviceName: { type: 'string' },
                    template: {
                      type: 'object',
                      properties: {
                        spec: {
                          type: 'object',
                          required: ['containers'],
                          properties: {
                            containers: { type: 'array', items: container },
                            nodeName: { type: 'string' },
                            affinity: { type: 'object', properties: { nodeAffinity: { type: 'object', properties: { weight: { type: 'integer' } } } } },
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
        tls: {
          type: 'object',
          required: ['mode', 'port', 'secret', 'issuer', 'since', 'hosts'],
          properties: {
            mode: { type: 'string', enum: ['strict', 'permissive'] },
            port: { type: 'integer', minimum: 1024, multipleOf: 10 },
            secret: { type: 'string', default: 'tls-secret' },
            issuer: { type: 'string', pattern: '^[a-z]{3}-[0-9]{2}$' },
            since: { type: 'string', format: 'date-time' },
            hosts: { type: 'array', minItems: 1, items: { type: 'string', minLength: 10 } },
            verify: { type: 'boolean' },
          },
        },
      },
    },
  },
});
const seed = { apiVersion: 'demo.kperturb.dev/v1', kind: 'Rabbit', metadata: { name: 'r1', namespace: 'default' }, spec: { replicas: 1 } };

/** Paths of objects in `cr` that lack a property their schema requires. */
function missingRequired(node: SchemaNode, value: unknown, path: string[] = []): string[] {
  if (Array.isArray(value)) return node.type === 'array' && node.items ? value.flatMap((v, i) => missingRequired(node.items!, v, [...path, String(i)])) : [];
  if (typeof value !== 'object' || value === null || node.type !== 'object') return [];
  const obj = value as Record<string, unknown>;
  return [
    ...(node.required ?? []).filter((r) => !(r in obj)).map((r) => [...path, r].join('.')),
    ...Object.entries(obj).flatMap(([k, v]) => {
      const child = node.properties?.get(k);
      return child ? missingRequired(child, v, [...path, k]) : [];
    }),
  ];
}

test('a write under parents the seed lacks creates them with their required properties: a PodSpec gets a container with a name and an image', (t) => {
  const campaign = generateExploration({ targets: [{ schema, kind: 'Rabbit', seeds: [seed] }], seed: 1, maxSteps: 3 });
  const steps = campaign.sequences.flatMap((s) => s.steps);
  const nodeName = steps.find((s) => s.property === 'spec.override.statefulSet.spec.template.spec.nodeName');
  t.truthy(nodeName);
  t.deepEqual(getAt(nodeName!.cr, ['spec', 'override', 'statefulSet', 'spec']), {
    serviceName: 'kperturb',
    // kube-apiserver refuses a pod template container without an image, though the CRD does not require it
    template: { spec: { containers: [{ name: 'kperturb', image: FILLER_IMAGE }], nodeName: nodeName!.value } },
  });
  // The patch the workload sends carries them too (it is what the API server validates).
  t.deepEqual(getAt(nodeName!.patch, ['spec', 'override', 'statefulSet', 'spec', 'template', 'spec', 'containers']), [
    { name: 'kperturb', image: FILLER_IMAGE },
  ]);
  for (const s of steps) t.deepEqual(missingRequired(schema, s.cr), [], `${s.operation} ${s.path.join('.')}`);
});

test('each required value is the least its schema allows: default, first enum value, minimum, pattern, format, minItems and minLength', (t) => {
  const tls = schema.properties!.get('spec')!.properties!.get('tls')!;
  const v = minimalValue(tls, new SeededRandom(1)) as Record<string, unknown>;
  t.is(v.mode, 'strict');
  t.is(v.port, 1030);
  t.is(v.secret, 'tls-secret');
  t.regex(String(v.issuer), /^[a-z]{3}-[0-9]{2}$/);
  t.is(v.since, '2001-02-03T04:05:06Z');
  t.deepEqual(v.hosts, ['kperturbxx']);
  t.false('verify' in v);
  const campaign = generateExploration({ targets: [{ schema, kind: 'Rabbit', seeds: [seed] }], seed: 1, maxSteps: 3 });
  const toggle = campaign.sequences.flatMap((s) => s.steps).find((s) => s.property === 'spec.tls.verify');
  t.deepEqual(Object.keys(getAt(toggle!.cr, ['spec', 'tls']) as object).sort(), ['hosts', 'issuer', 'mode', 'port', 'secret', 'since', 'verify']);
});

test('an array item the CR no longer has is created as a list item, not an object keyed "0"', (t) => {
  t.deepEqual(setAt({ spec: {} }, ['spec', 'list', 0, 'name'], 'a'), { spec: { list: [{ name: 'a' }] } });
});

test('a container a write creates on its way gets a name and an image; one the CR has keeps its own', (t) => {
  const podSpec = ['spec', 'override', 'statefulSet', 'spec', 'template', 'spec'];
  const ports = [...podSpec, 'containers', 0, 'ports'];
  const created = fillRequired(schema, seed, setAt(seed, ports, [{ containerPort: 8080 }]), ports, new SeededRandom(1));
  t.deepEqual(getAt(created, [...podSpec, 'containers']), [{ name: 'kperturb', image: FILLER_IMAGE, ports: [{ containerPort: 8080 }] }]);

  const own = setAt(seed, [...podSpec, 'containers'], [{ name: 'rabbitmq' }]);
  const kept = fillRequired(schema, own, setAt(own, ports, [{ containerPort: 8080 }]), ports, new SeededRandom(1));
  t.deepEqual(
    getAt(kept, [...podSpec, 'containers']),
    [{ name: 'rabbitmq', ports: [{ containerPort: 8080 }] }],
    'an existing container is merged by name: no image added',
  );
});

test('a pushed container gets an image too: kube-apiserver refuses a pod whose container has none (zookeeper-operator: a pushed initContainer)', (t) => {
  const campaign = generateExploration({ targets: [{ schema, kind: 'Rabbit', seeds: [seed] }], seed: 1, maxSteps: 3 });
  const pushes = campaign.sequences.flatMap((s) => s.steps).filter((s) => s.operation === 'array-push' && s.property.endsWith('.containers'));
  t.true(pushes.length > 0);
  for (const p of pushes) {
    const item = (p.value as Array<Record<string, unknown>>).at(-1)!;
    t.is(item.image, FILLER_IMAGE);
    t.is(typeof item.name, 'string');
  }
});

test('after a rollback of the step that created a pod template, a later step under it creates it again with its containers', (t) => {
  const podSpec = ['spec', 'override', 'statefulSet', 'spec', 'template', 'spec'];
  const campaign = generateExploration({ targets: [{ schema, kind: 'Rabbit', seeds: [seed] }], seed: 1, maxSteps: 5 });
  // A sequence whose first step under the pod template creates it, and a later step writes there too.
  const found = campaign.sequences.flatMap((sequence) => {
    const under = sequence.steps.flatMap((s, i) => (s.path.length > podSpec.length && podSpec.every((p, j) => s.path[j] === p) ? [i] : []));
    return under.length >= 2 && getAt(under[0]! === 0 ? sequence.seed : sequence.steps[under[0]! - 1]!.cr, podSpec) === undefined
      ? [{ sequence, first: under[0]!, later: under[1]! }]
      : [];
  })[0];
  t.truthy(found, 'a sequence with two steps under the pod template');
  const { sequence, first, later } = found!;
  // The later step's own patch was made where the template had its container: it carries none.
  t.is(getAt(sequence.steps[later]!.patch, [...podSpec, 'containers']), undefined);
  const before = first === 0 ? sequence.seed : sequence.steps[first - 1]!.cr;
  const back = rollbackSequence({
    sequence,
    step: first + 1,
    specBefore: before.spec,
    specAfter: sequence.steps[first]!.cr.spec,
    continueAfter: true,
    schema,
  });
  // The replay: the steps up to the rolled-back one, the rollback, then the rest; the later step is at later + 1.
  const replayed = back.steps[later + 1]!;
  t.is(replayed.operation, sequence.steps[later]!.operation);
  t.deepEqual(missingRequired(schema, replayed.cr), []);
  t.deepEqual(
    getAt(replayed.patch, [...podSpec, 'containers']),
    [{ name: 'kperturb', image: FILLER_IMAGE }],
    'the patch the API server validates carries them',
  );
  t.deepEqual(
    rollbackSequence({ sequence, step: first + 1, specBefore: before.spec, specAfter: sequence.steps[first]!.cr.spec, continueAfter: true, schema }),
    back,
    'deterministic',
  );
});
