/**
 * `kperturb job` on a real control plane: the manifest it writes is accepted by kube-apiserver, and
 * the real Job controller creates one pod per shard with completion indices 0..N-1, each given
 * JOB_COMPLETION_INDEX and the command and environment its shard needs (`kperturb test --shard
 * $JOB_COMPLETION_INDEX/N` over the campaign in the image). The pods' script itself runs in
 * test/campaign/job.test.ts (no image can be built or pulled here).
 */
import test from 'ava';
import { indexedJob, SHARD_SCRIPT } from '../../src/campaign/job.js';
import { KubeClient } from '../../src/kube/client.js';
import { RealCluster } from '../../src/realcluster/index.js';
import { eventually } from './_helpers.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}
interface Pod {
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: { restartPolicy: string; containers: Array<{ command: string[]; env: EnvVar[]; image: string }> };
}

let cluster: RealCluster;
let client: KubeClient;

test.before(async () => {
  cluster = await RealCluster.start({ simulation: { nodes: ['node-1'] } });
  client = new KubeClient(cluster.url, cluster.clientOptions());
});

test.after.always(async () => {
  client?.close();
  await cluster?.stop();
});

test('the Job controller creates N pods with completion indices 0..N-1, each with the command and environment of its shard', async (t) => {
  const shards = 4;
  const job = indexedJob({ controller: 'mirror', shards, image: 'registry.example/kperturb-mirror:1', parallel: 2 });
  const created = await client.request('POST', '/apis/batch/v1/namespaces/default/jobs', { body: job });
  t.is(created.status, 201, JSON.stringify(created.body));
  const pods = await eventually(`${shards} pods of the Job`, 60_000, async () => {
    const list = (await client.request('GET', '/api/v1/namespaces/default/pods', { query: { labelSelector: 'job-name=kperturb-mirror' } })).body as {
      items: Pod[];
    };
    return list.items.length >= shards ? list.items : undefined;
  });
  t.is(pods.length, shards);
  const indices = pods.map((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index']).sort();
  t.deepEqual(indices, ['0', '1', '2', '3']);
  for (const pod of pods) {
    const index = pod.metadata.annotations!['batch.kubernetes.io/job-completion-index'];
    t.is(pod.spec.restartPolicy, 'Never');
    const c = pod.spec.containers[0]!;
    t.deepEqual(c.command, ['/bin/sh', '-c', SHARD_SCRIPT]);
    const env = Object.fromEntries(c.env.map((e) => [e.name, e]));
    // The Job controller adds the index, from the pod's own label (1.28+, PodIndexLabel) or annotation.
    t.regex(
      env.JOB_COMPLETION_INDEX?.valueFrom?.fieldRef?.fieldPath ?? '',
      /^metadata\.(labels|annotations)\['batch\.kubernetes\.io\/job-completion-index'\]$/,
      `${pod.metadata.name} (index ${index})`,
    );
    t.is(pod.metadata.labels?.['batch.kubernetes.io/job-completion-index'] ?? index, index);
    t.is(env.KPERTURB_SHARDS?.value, String(shards));
    t.is(env.KPERTURB_CAMPAIGN?.value, '/campaign');
    t.is(env.KPERTURB_PARALLEL?.value, '2');
  }
});
