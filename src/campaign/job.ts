/**
 * A campaign as a Kubernetes Indexed Job (`kperturb job`): N pods, each running
 * `kperturb test --shard $JOB_COMPLETION_INDEX/N` against its own embedded cluster inside the pod,
 * so that the cluster's Job controller spreads the plans over its nodes (docs/sharding.md).
 *
 * The pod's image holds kperturb, the controller under test and the campaign (kperturb.yaml with
 * what it names, and the output directory of `learn` and `plan`) under /campaign: the repository's Containerfile
 * builds it. Each pod copies the campaign's output directory to `<results>/shard-<I>`, runs its share
 * there, and exits 0 when the share ran (found bugs included: exit 1 of `kperturb test` is a result,
 * not a failure, so the Job does not retry it); exit 2 (a setup failure) fails the pod and the Job
 * retries that index. `<results>` is a volume: a ReadWriteMany claim (`--results-claim`) that
 * `kperturb report` then reads as `shard-*`, or an emptyDir whose contents `kubectl cp` fetches
 * while the pod lingers (see docs).
 */
import { stringify } from 'yaml';
import { UserInputError } from '../model/errors.js';
import { MAX_SHARDS } from './shard.js';

export interface JobOptions {
  /** The controller's name (kperturb.yaml metadata.name): the Job's name and label. */
  controller: string;
  shards: number;
  image: string;
  /** Default `kperturb-<controller>`. */
  name?: string;
  namespace?: string;
  /** A ReadWriteMany PersistentVolumeClaim for the results (default: an emptyDir). */
  resultsClaim?: string;
  /** Plans each pod runs at once (`test -j`). */
  parallel?: number;
  /** Where the image holds the campaign (default /campaign). */
  campaignDir?: string;
  /** The CPU and memory each pod asks for (default 2 CPUs, 4Gi: an embedded cluster, a proxy and a controller). */
  cpu?: string;
  memory?: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The shell script each pod runs; its environment gives JOB_COMPLETION_INDEX (set by the Job
 * controller), KPERTURB_SHARDS, KPERTURB_CAMPAIGN, KPERTURB_RESULTS and KPERTURB_PARALLEL.
 */
export const SHARD_SCRIPT = `set -u
out="$KPERTURB_RESULTS/shard-$JOB_COMPLETION_INDEX"
rm -rf "$out" && mkdir -p "$out" && cp -R "$KPERTURB_CAMPAIGN/out/." "$out/" || exit 2
kperturb test --shard "$JOB_COMPLETION_INDEX/$KPERTURB_SHARDS" -c "$KPERTURB_CAMPAIGN/kperturb.yaml" -o "$out" -j "$KPERTURB_PARALLEL"
code=$?
echo "kperturb: shard $JOB_COMPLETION_INDEX/$KPERTURB_SHARDS exited $code; results in $out"
[ "$code" -le 1 ] || exit "$code"
`;

export function indexedJob(opts: JobOptions): Record<string, unknown> {
  const name = opts.name ?? `kperturb-${opts.controller}`.slice(0, 63).replace(/-+$/, '');
  if (!DNS_LABEL.test(name))
    throw new UserInputError(
      undefined,
      '--name',
      `a DNS label for the Job's name (lower case letters, digits and '-', at most 63; got ${JSON.stringify(name)})`,
    );
  if (opts.namespace !== undefined && !DNS_LABEL.test(opts.namespace))
    throw new UserInputError(undefined, '--namespace', `a namespace name (got ${JSON.stringify(opts.namespace)})`);
  if (!Number.isInteger(opts.shards) || opts.shards < 1 || opts.shards > MAX_SHARDS)
    throw new UserInputError(undefined, '--shards', `a whole number of shards from 1 to ${MAX_SHARDS} (got ${opts.shards})`);
  if (opts.image.trim() === '' || /\s/.test(opts.image))
    throw new UserInputError(undefined, '--image', `a container image reference (got ${JSON.stringify(opts.image)})`);
  const labels = { 'app.kubernetes.io/name': 'kperturb', 'kperturb.dev/controller': opts.controller };
  const results = opts.resultsClaim ? { name: 'results', persistentVolumeClaim: { claimName: opts.resultsClaim } } : { name: 'results', emptyDir: {} };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, ...(opts.namespace ? { namespace: opts.namespace } : {}), labels },
    spec: {
      completionMode: 'Indexed',
      completions: opts.shards,
      parallelism: opts.shards,
      // A pod that fails (exit 2: a setup failure) is retried; a bug found is not a failure.
      backoffLimit: opts.shards,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'kperturb',
              image: opts.image,
              command: ['/bin/sh', '-c', SHARD_SCRIPT],
              env: [
                { name: 'KPERTURB_SHARDS', value: String(opts.shards) },
                { name: 'KPERTURB_CAMPAIGN', value: opts.campaignDir ?? '/campaign' },
                { name: 'KPERTURB_RESULTS', value: '/results' },
                { name: 'KPERTURB_PARALLEL', value: String(opts.parallel ?? 2) },
              ],
              resources: { requests: { cpu: opts.cpu ?? '2', memory: opts.memory ?? '4Gi' } },
              volumeMounts: [{ name: 'results', mountPath: '/results' }],
            },
          ],
          volumes: [results],
        },
      },
    },
  };
}

export function renderJob(opts: JobOptions): string {
  return stringify(indexedJob(opts), { lineWidth: 0, blockQuote: 'literal' });
}
