/**
 * The client fidelity matrix against the embedded cluster, directly and through the proxy (the
 * real-control-plane tier runs the same cells: test/real/fidelity.real.ts). One cluster for the
 * file, a namespace and (for the proxy column) a proxy per cell. Go cells skip themselves, with the
 * reason in their title, when `go` is absent. See docs/fidelity.md.
 */
import test from 'ava';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { buildGoProbe } from './_build.js';
import { MatrixEnv, registerMatrix } from './_matrix.js';
import { writeOutcomes } from './_outcomes.js';

buildGoProbe();

let cluster: EmbeddedCluster | undefined;
let envPromise: Promise<MatrixEnv> | undefined;

function env(): Promise<MatrixEnv> {
  envPromise ??= (async () => {
    // The WatchList gate as the real tier's kube-apiserver 1.33 has it by default (off): the
    // go-watchlist-on cells then see the same refusal on both tiers and fall back to LIST.
    cluster = await EmbeddedCluster.start({ port: 0, featureGates: { WatchList: false } });
    return MatrixEnv.start({ kind: 'embedded', url: cluster.url, kubeconfigYaml: cluster.kubeconfigYaml(), clientOptions: cluster.clientOptions() }, 3);
  })();
  return envPromise;
}

test.after.always(async () => {
  if (envPromise) {
    const e = await envPromise;
    writeOutcomes('embedded', e.observed);
    await e.stop();
  }
  await cluster?.stop();
});

registerMatrix(test, 'embedded', env);
