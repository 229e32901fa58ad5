import test from 'ava';
import { compareRuns } from '../../oracles/index.js';
import { stillBroken } from '../../oracles/recovery.js';
import { keyOf, type KubeObject } from '../../src/model/object-key.js';
import type { RunArtifacts } from '../../src/model/results.js';
import type { ClusterChangeEvent } from '../../src/model/trace.js';

/**
 * A run of zookeeper-operator's shape: the custom resource written once per version of
 * `crVersions`, then its children made with `labels` (the operator's `owner-rv` is the CR's version
 * when it wrote them), each child given the next version. `other` objects come first, versions 1...
 */
function run(
  crVersions: string[],
  children: Array<{ kind: string; name: string; labels: Record<string, string>; spec?: Record<string, unknown> }>,
  other: Array<[string, KubeObject]> = [],
): RunArtifacts {
  const changes: ClusterChangeEvent[] = [];
  const endState: RunArtifacts['endState'] = {};
  const write = (version: string, obj: KubeObject, eventType: ClusterChangeEvent['eventType'] = 'ADDED') => {
    const written = { ...obj, metadata: { ...obj.metadata, uid: `uid-${obj.metadata?.name ?? ''}-${version}`, resourceVersion: version } };
    changes.push({ type: 'cluster-change', seq: changes.length + 1, ts: 0, eventType, key: keyOf(written)!, resourceVersion: version, object: written });
    endState[keyOf(written)!] = written;
  };
  for (const [version, obj] of other) write(version, obj);
  const cr: KubeObject = {
    apiVersion: 'zookeeper.pravega.io/v1beta1',
    kind: 'ZookeeperCluster',
    metadata: { name: 'zk', namespace: 'default' },
    spec: { replicas: 1 },
  };
  crVersions.forEach((v, i) => write(v, cr, i === 0 ? 'ADDED' : 'MODIFIED'));
  let next = Number(crVersions[crVersions.length - 1]) + 1;
  for (const c of children) {
    const apiVersion = c.kind === 'StatefulSet' ? 'apps/v1' : 'v1';
    write(String(next++), { apiVersion, kind: c.kind, metadata: { name: c.name, namespace: 'default', labels: c.labels }, spec: c.spec ?? {} });
  }
  return { endState, clusterChanges: changes };
}

const children = (ownerRv: string | undefined, serviceOwnerRv: string | undefined = ownerRv) => [
  { kind: 'StatefulSet', name: 'zk', labels: { app: 'zk', ...(ownerRv === undefined ? {} : { 'owner-rv': ownerRv }) } },
  { kind: 'Service', name: 'zk-client', labels: { app: 'zk', ...(serviceOwnerRv === undefined ? {} : { 'owner-rv': serviceOwnerRv }) } },
];

const fields = (alarms: ReturnType<typeof compareRuns>) => alarms.map((a) => [a.object, a.field]);

test("a label that copies the CR's resourceVersion does not alarm when a fault run wrote the CR once more", (t) => {
  // Both reference runs wrote the CR three times and labelled the children with its third version.
  const refs = [run(['24', '25', '26'], children('26')), run(['24', '25', '26'], children('26'))];
  // The fault run's controller wrote the CR once more (a retried conflict) before the children.
  t.deepEqual(compareRuns(refs, run(['24', '25', '26', '27'], children('27'))), []);
  // And copied a version from a stale view of the CR: still one it had.
  t.deepEqual(compareRuns(refs, run(['24', '25', '26', '27'], children('25'))), []);
});

test("an annotation of a pod template that copies the CR's resourceVersion is a copy too", (t) => {
  const sts = (version: string) => [
    { kind: 'StatefulSet', name: 'zk', labels: { app: 'zk' }, spec: { template: { metadata: { annotations: { 'cr-version': version } } } } },
  ];
  const refs = [run(['24', '25', '26'], sts('26')), run(['24', '25', '26'], sts('26'))];
  t.deepEqual(compareRuns(refs, run(['24', '25', '26', '27'], sts('27'))), []);
  t.deepEqual(fields(compareRuns(refs, run(['24', '25', '26', '27'], sts('99')))), [
    ['StatefulSet/default/zk', 'spec.template.metadata.annotations.cr-version'],
  ]);
});

test('a copy of a resourceVersion that a child made in another reconcile has or lacks is no difference', (t) => {
  const refs = [run(['24', '25', '26'], children('26')), run(['24', '25', '26'], children('26'))];
  // The Service made in the next reconcile, from a map without the label (zookeeper's spec.labels).
  t.deepEqual(compareRuns(refs, run(['24', '25', '26'], children('26', undefined))), []);
  // The other way round: the references' Service had none; the test run's copies the CR's version.
  const refsWithout = [run(['24', '25', '26'], children('26', undefined)), run(['24', '25', '26'], children('26', undefined))];
  t.deepEqual(compareRuns(refsWithout, run(['24', '25', '26', '27'], children('27'))), []);
});

test('a numeric label that is no resourceVersion of anything still alarms', (t) => {
  const labelled = (size: string) => [{ kind: 'StatefulSet', name: 'zk', labels: { app: 'zk', size } }];
  const refs = [run(['24', '25', '26'], labelled('3')), run(['24', '25', '26'], labelled('3'))];
  t.deepEqual(fields(compareRuns(refs, run(['24', '25', '26', '27'], labelled('4')))), [['StatefulSet/default/zk', 'metadata.labels.size']]);
});

test('a copy in the references whose test value is no version of the same object still alarms', (t) => {
  const refs = [run(['24', '25', '26'], children('26')), run(['24', '25', '26'], children('26'))];
  // 99 is no version of anything; 28 is the StatefulSet's own version in the test run, not the CR's.
  for (const value of ['99', '28'])
    t.deepEqual(
      fields(compareRuns(refs, run(['24', '25', '26', '27'], children(value)))),
      [
        ['Service/default/zk-client', 'metadata.labels.owner-rv'],
        ['StatefulSet/default/zk', 'metadata.labels.owner-rv'],
      ],
      value,
    );
});

test('a value that is a version of different objects in the two reference runs is compared by value', (t) => {
  const node = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: {} });
  const labelled = (size: string) => [{ kind: 'StatefulSet', name: 'zk', labels: { app: 'zk', size } }];
  // "3" is, by chance, the version of ConfigMap a in one reference run and of ConfigMap b in the other.
  const refs = [
    run(['24', '25', '26'], labelled('3'), [
      ['3', node('a')],
      ['4', node('b')],
    ]),
    run(['24', '25', '26'], labelled('3'), [
      ['2', node('a')],
      ['3', node('b')],
    ]),
  ];
  const tst = run(['24', '25', '26'], labelled('4'), [
    ['3', node('a')],
    ['4', node('b')],
  ]);
  t.deepEqual(fields(compareRuns(refs, tst)), [['StatefulSet/default/zk', 'metadata.labels.size']]);
});

test('only labels and annotations are read as copies: a data value equal to a version is compared', (t) => {
  const withData = (value: string): Array<[string, KubeObject]> => [
    ['1', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'conf', namespace: 'default' }, data: { replicas: value } }],
  ];
  const refs = [run(['24', '25', '26'], [], withData('26')), run(['24', '25', '26'], [], withData('26'))];
  t.deepEqual(fields(compareRuns(refs, run(['24', '25', '26', '27'], [], withData('27')))), [['ConfigMap/default/conf', 'data.replicas']]);
});

test("recovery's still-broken check judges a copied version by the run's history, not its end state alone", (t) => {
  const refs = [run(['24', '25', '26'], children('26')), run(['24', '25', '26'], children('26'))];
  // A run whose CR was written once more after the children copied its version (a status update):
  // in the end state the CR is at 27, the label at 25, a version the CR had earlier in the run.
  const recovered = run(['24', '25', '26', '27'], children('25'));
  t.deepEqual(stillBroken(refs, recovered, []), []);
  // Its end state alone knows only the CR's last version: the label would count as still broken.
  t.deepEqual(
    stillBroken(refs, { endState: recovered.endState, clusterChanges: [] }, []).map((a) => [a.object, a.field]),
    [
      ['Service/default/zk-client', 'metadata.labels.owner-rv'],
      ['StatefulSet/default/zk', 'metadata.labels.owner-rv'],
    ],
  );
});
