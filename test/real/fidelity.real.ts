/**
 * The client fidelity matrix against the real control plane (kube-apiserver, etcd,
 * kube-controller-manager), directly and through the proxy: the same cells and expectations as the
 * embedded tier (test/fidelity/matrix.test.ts). Each cell is also checked against the embedded tier's
 * outcome of the same cell when that tier ran before on this machine (`npm test` writes it; see
 * test/fidelity/_outcomes.ts). One control plane for the file (no simulated kubelets: no cell needs
 * pods), a namespace and (for the proxy column) a proxy per cell. See docs/fidelity.md.
 */
import test from 'ava';
import { ensureControlPlaneBinaries, RealCluster } from '../../src/realcluster/index.js';
import { buildGoProbe } from '../fidelity/_build.js';
import { MatrixEnv, registerMatrix } from '../fidelity/_matrix.js';
import { readOutcomes, writeOutcomes } from '../fidelity/_outcomes.js';

buildGoProbe();

const log: string[] = [];
let cluster: RealCluster | undefined;
let envPromise: Promise<MatrixEnv> | undefined;

function env(): Promise<MatrixEnv> {
  envPromise ??= (async () => {
    const started = Date.now();
    cluster = await RealCluster.start({ binaries: await ensureControlPlaneBinaries((l) => log.push(l)), log: (l) => log.push(l), simulation: false });
    log.push(`control plane started in ${Date.now() - started} ms`);
    return MatrixEnv.start({ kind: 'real', url: cluster.url, kubeconfigYaml: cluster.kubeconfigYaml(), clientOptions: cluster.clientOptions() }, 2);
  })();
  return envPromise;
}

test.after.always(async () => {
  if (envPromise) {
    const e = await envPromise.catch(() => undefined);
    if (e) {
      writeOutcomes('real', e.observed);
      await e.stop();
    }
  }
  await cluster?.stop();
});

const embedded = readOutcomes('embedded');
registerMatrix(test, 'real', env, embedded ? { cluster: 'embedded', outcomes: embedded } : undefined);
