/** kperturb explore's core: the schema model and the operations generated from it, on hand-built schemas. */
import test from 'ava';
import {
  crdVersionSchema,
  generateExploration,
  matchCoreTypes,
  parseSchema,
  walkNodes,
  MISOPERATION_REPLICAS,
  rollbackSequence,
  type ExploreSequence,
  type ExploreStep,
} from '../../planner/explore/index.js';

const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['replicas'],
      properties: {
        replicas: { type: 'integer', minimum: 1, maximum: 5 },
        image: { type: 'string' },
        mode: { type: 'string', enum: ['fast', 'safe', 'off'] },
        tls: { type: 'boolean', default: false },
        storage: { type: 'string', pattern: '^[0-9]+(Mi|Gi)$' },
        name: { type: 'string', maxLength: 3 },
        port: { type: 'integer', minimum: 1000, maximum: 1010, multipleOf: 5 },
        podLabels: { type: 'object', additionalProperties: { type: 'string' } },
        args: { type: 'array', items: { type: 'string' }, maxItems: 3 },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        quota: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        resources: {
          type: 'object',
          properties: {
            limits: { type: 'object', additionalProperties: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } },
            requests: { type: 'object', additionalProperties: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } },
            claims: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, request: { type: 'string' } } } },
          },
        },
        both: { allOf: [{ type: 'integer' }, { minimum: 2 }], 'x-kubernetes-validations': [{ rule: 'self >= 2' }] },
      },
    },
  },
};

const seed = {
  apiVersion: 'demo.kperturb.dev/v1',
  kind: 'Cache',
  metadata: { name: 'c1', namespace: 'default' },
  spec: { replicas: 1, image: 'cache:1', mode: 'safe', storage: '1Gi', podLabels: { app: 'c1' }, args: ['-v'], resources: { requests: { cpu: '500m' } } },
};

const coreTypes = {
  'io.k8s.api.core.v1.ResourceRequirements': {
    properties: {
      claims: { type: 'array', items: { $ref: '#/definitions/io.k8s.api.core.v1.ResourceClaim' } },
      limits: { type: 'object', additionalProperties: { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' } },
      requests: { type: 'object', additionalProperties: { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' } },
    },
  },
  'io.k8s.api.core.v1.ResourceClaim': { properties: { name: { type: 'string' }, request: { type: 'string' } } },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { type: 'string' },
};

const campaign = (seedNumber = 7, maxSteps = 4) =>
  generateExploration({ targets: [{ schema: parseSchema(schema), kind: 'Cache', seeds: [seed] }], seed: seedNumber, maxSteps, coreTypes });

const steps = (seedNumber?: number): ExploreStep[] => campaign(seedNumber).sequences.flatMap((s) => s.steps);

test('the schema model keeps each constraint, folds allOf and tells maps, int-or-string and opaque nodes apart', (t) => {
  const root = parseSchema(schema);
  const spec = root.properties!.get('spec')!;
  const p = (name: string) => spec.properties!.get(name)!;
  t.deepEqual(spec.required, ['replicas']);
  t.like(p('replicas'), { type: 'integer', minimum: 1, maximum: 5 });
  t.like(p('port'), { multipleOf: 5 });
  t.deepEqual(p('mode').enum, ['fast', 'safe', 'off']);
  t.like(p('tls'), { type: 'boolean', default: false });
  t.like(p('storage'), { pattern: '^[0-9]+(Mi|Gi)$' });
  t.like(p('podLabels'), { type: 'map' });
  t.is(p('podLabels').items!.type, 'string');
  t.like(p('args'), { type: 'array', maxItems: 3 });
  t.is(p('extra').type, 'opaque');
  t.is(p('quota').type, 'int-or-string');
  t.like(p('both'), { type: 'integer', minimum: 2 });
  t.deepEqual(p('both').validations, ['self >= 2']);
  t.deepEqual(p('resources').properties!.get('claims')!.items!.path, ['spec', 'resources', 'claims', '*']);
  t.true([...walkNodes(root)].length > 15);
});

test('the CRD version is the one the seed is written against, not the last', (t) => {
  const crd = {
    spec: {
      group: 'demo.kperturb.dev',
      names: { kind: 'Cache' },
      versions: [
        { name: 'v1', schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } } } },
        { name: 'v2', schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { b: { type: 'string' } } } } } } },
      ],
    },
  };
  const v = crdVersionSchema(crd, 'demo.kperturb.dev/v1')!;
  t.is(v.version, 'v1');
  t.true(parseSchema(v.schema).properties!.get('spec')!.properties!.has('a'));
  t.is(crdVersionSchema(crd, 'other.dev/v1'), undefined);
});

test('the same input gives byte-identical campaigns; another seed number another order', (t) => {
  t.is(JSON.stringify(campaign(7)), JSON.stringify(campaign(7)));
  t.not(JSON.stringify(campaign(7).sequences), JSON.stringify(campaign(8).sequences));
});

test('every write stays within its constraints', (t) => {
  for (const s of steps()) {
    const name = s.path[1];
    if (s.deleted) {
      t.not(name, 'replicas', 'a required field is never deleted');
      continue;
    }
    if (s.path.length !== 2) continue;
    const v = s.value;
    if (name === 'replicas' && s.kind !== 'misoperation') t.true(typeof v === 'number' && v >= 1 && v <= 5, `replicas ${String(v)}`);
    if (name === 'mode') t.true(['fast', 'safe', 'off'].includes(v as string));
    if (name === 'storage') t.regex(String(v), /^[0-9]+(Mi|Gi)$/);
    if (name === 'name') t.true(String(v).length <= 3);
    if (name === 'port') t.true((v as number) % 5 === 0 && (v as number) >= 1000 && (v as number) <= 1010);
    if (name === 'args') t.true((v as unknown[]).length <= 3);
  }
});

test('primitive operations: markers on strings, each other enum value, toggles, push/pop/empty, map keys, up/down with a setup step at the minimum', (t) => {
  const all = steps();
  const ops = (property: string) => all.filter((s) => s.property === property).map((s) => s.operation);
  const change = all.find((s) => s.operation === 'string-change' && s.property === 'spec.image')!;
  t.regex(String(change.value), /^kpm-\d+$/);
  t.is(change.marker, String(change.value));
  t.deepEqual(ops('spec.mode').sort(), ['enum-fast', 'enum-off', 'string-delete']);
  t.true(ops('spec.tls').includes('boolean-toggle'));
  t.true(['array-push', 'array-pop', 'array-empty', 'array-delete'].every((o) => ops('spec.args').includes(o)));
  t.true(['map-add-key'].every((o) => ops('spec.podLabels').includes(o)));
  const down = all.filter((s) => s.operation === 'integer-down' && s.property === 'spec.port');
  t.true(down.length >= 1);
  // replicas is at its minimum in the seed: the scale-down first scales up, marked as setup.
  const scaleDown = all.filter((s) => s.operation === 'integer-down' && s.property === 'spec.replicas');
  t.deepEqual(
    scaleDown.map((s) => [s.value, s.setup ?? false]),
    [
      [2, true],
      [1, false],
    ],
  );
  // No marker fits in maxLength 3: a short value without one.
  const short = all.find((s) => s.property === 'spec.name')!;
  t.is(short.marker, undefined);
  t.true(String(short.value).length <= 3 && String(short.value).length > 0);
});

test('semantic operations and misoperations: replicas, image, labels, storage, resources (matched by structure, its primitives left out)', (t) => {
  const all = steps();
  const names = new Set(all.map((s) => s.operation));
  for (const op of [
    'replicas-down-then-up',
    'replicas-up-then-down',
    'image-change',
    'label-add-then-remove',
    'storage-expand',
    'resources-requests-cpu-up-then-down',
  ])
    t.true(names.has(op), op);
  const beyond = all.filter((s) => s.operation === 'replicas-beyond-nodes');
  t.true(beyond.length === 0, 'replicas is bounded by maximum 5: no misoperation beyond it');
  const labels = all.filter((s) => s.operation === 'label-add-then-remove');
  t.is(labels.length, 2);
  t.deepEqual(labels[1]!.patch, { spec: { podLabels: { [`kperturb.dev/${labels[0]!.marker}`]: null } } });
  t.deepEqual(
    all.filter((s) => s.operation.startsWith('resources-')).map((s) => s.value),
    ['1000m', '250m'],
  );
  t.false(all.some((s) => s.property.startsWith('spec.resources.') && s.kind === 'primitive'));
  // ... but the matched object itself can still be deleted as a whole (redis-ot's nil resources panic).
  t.true(all.some((s) => s.property === 'spec.resources' && s.operation === 'object-delete' && s.deleted === true));
  t.true(matchCoreTypes(parseSchema(schema), coreTypes).get('spec.resources')!.endsWith('ResourceRequirements'));
});

test('misoperations are marked and come back', (t) => {
  const unbounded = JSON.parse(JSON.stringify(schema)) as typeof schema;
  delete (unbounded.properties.spec.properties.replicas as { maximum?: number }).maximum;
  const c = generateExploration({ targets: [{ schema: parseSchema(unbounded), kind: 'Cache', seeds: [seed] }], seed: 1, maxSteps: 10 });
  const beyond = c.sequences.flatMap((s) => s.steps).filter((s) => s.operation === 'replicas-beyond-nodes');
  t.deepEqual(
    beyond.map((s) => [s.kind, s.value]),
    [
      ['misoperation', MISOPERATION_REPLICAS],
      ['misoperation', 1],
    ],
  );
});

test('sequences chain: each step patches the CR the step before left, and hold at most maxSteps', (t) => {
  for (const seq of campaign(3, 3).sequences) {
    t.true(seq.steps.length <= 3);
    t.regex(seq.name, /^explore-cache-c1-\d+$/);
    let cr: unknown = seq.seed;
    for (const s of seq.steps) {
      cr = applyMerge(cr, s.patch);
      t.deepEqual(cr, s.cr);
    }
  }
});

test('coverage: every property under spec, with a reason for each one no operation changes', (t) => {
  const props = new Map(campaign().coverage[0]!.properties.map((p) => [p.property, p]));
  t.true(props.get('spec.image')!.operations > 0);
  t.regex(props.get('spec.extra')!.uncovered!, /opaque/);
  t.regex(props.get('spec.resources.claims.*.name')!.uncovered!, /ResourceRequirements/);
  t.true(props.get('spec.name')!.operations > 0);
  t.true(props.get('spec.resources')!.operations > 0);
});

test('a field under an object with a boolean `enabled` gets the flag turned on first (a setup step), and its steps name that gate', (t) => {
  const gatedSchema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          pdb: { type: 'object', properties: { enabled: { type: 'boolean' }, minAvailable: { type: 'integer', minimum: 0 }, name: { type: 'string' } } },
          exporter: { type: 'object', properties: { enabled: { type: 'boolean' }, image: { type: 'string' } } },
        },
      },
    },
  };
  const gatedSeed = { ...seed, spec: { exporter: { enabled: true, image: 'x:1' } } };
  const all = generateExploration({ targets: [{ schema: parseSchema(gatedSchema), kind: 'Cache', seeds: [gatedSeed] }], seed: 1, maxSteps: 5 }).sequences;
  const name = all.find((s) => s.steps.some((st) => st.property === 'spec.pdb.name'))!.steps;
  const at = name.findIndex((st) => st.property === 'spec.pdb.name');
  t.like(name[at - 1], { operation: 'gate-on', setup: true, property: 'spec.pdb.enabled', value: true });
  t.deepEqual(name[at - 1]!.path, ['spec', 'pdb', 'enabled']);
  t.deepEqual(name[at]!.gate, ['spec', 'pdb', 'enabled']);
  t.true((name[at]!.cr.spec as { pdb: { enabled: boolean } }).pdb.enabled);
  // The flag already on: no setup step (only after a step of the same sequence turned it off, deleted or emptied it). The flag's own toggle is not gated by itself.
  for (const seq of all)
    for (const [i, st] of seq.steps.entries())
      if (st.operation === 'gate-on' && st.property === 'spec.exporter.enabled')
        t.not((((i > 0 ? seq.steps[i - 1]!.cr : seq.seed).spec as Record<string, { enabled?: boolean }>).exporter ?? {}).enabled, true);
  const image = all.flatMap((s) => s.steps).filter((st) => st.property.startsWith('spec.exporter.'));
  t.true(image.filter((st) => st.property === 'spec.exporter.image').every((st) => st.gate !== undefined));
  t.true(image.filter((st) => st.property === 'spec.exporter.enabled').every((st) => st.gate === undefined));
});

function applyMerge(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMerge(out[k], v);
  }
  return out;
}

test('a rollback run replays the sequence up to the step, re-applies the CR before it, and after a refused input goes on with the later patches on that CR', (t) => {
  const cr = (spec: Record<string, unknown>) => ({ apiVersion: 'demo/v1', kind: 'Db', metadata: { name: 'd' }, spec });
  const op = (operation: string, patch: Record<string, unknown>, spec: Record<string, unknown>): ExploreStep => ({
    operation,
    kind: 'primitive',
    property: 'spec.x',
    path: ['spec', 'x'],
    patch: { spec: patch },
    cr: cr(spec),
  });
  const sequence: ExploreSequence = {
    name: 'explore-db-d-1',
    seed: cr({ version: '1.0.0', size: 1 }),
    steps: [
      op('a', { size: 2 }, { version: '1.0.0', size: 2 }),
      op('b', { version: '' }, { version: '', size: 2 }),
      op('c', { size: 3 }, { version: '', size: 3 }),
    ],
  };
  const input = { sequence, step: 2, specBefore: { version: '1.0.0', size: 2, mode: 'x' }, specAfter: { version: '', size: 2, mode: 'x' } };
  const back = rollbackSequence({ ...input, continueAfter: true });
  t.is(back.name, 'explore-db-d-1-rollback-2');
  t.deepEqual(
    back.steps.map((s) => [s.operation, s.kind]),
    [
      ['a', 'primitive'],
      ['b', 'primitive'],
      ['rollback', 'rollback'],
      ['c', 'primitive'],
    ],
  );
  t.deepEqual(back.steps[2]!.patch, { spec: { version: '1.0.0' } });
  t.deepEqual(back.steps[3]!.cr.spec, { version: '1.0.0', size: 3, mode: 'x' });
  t.is(rollbackSequence({ ...input, continueAfter: false }).steps.length, 3);
});
