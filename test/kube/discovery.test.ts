/** ResourceMapper: what kperturb's own clients (cluster recorder, simulated controllers) learn from discovery. */
import test from 'ava';
import { ResourceMapper, type FetchJson } from '../../src/kube/discovery.js';

test('all() lists each group preferred version first, whichever discovery document answers first', async (t) => {
  // policy/v1 answers last: the answer order must not decide which version a resource is watched in.
  let releaseV1: () => void = () => undefined;
  const v1Answered = new Promise<void>((resolve) => (releaseV1 = resolve));
  const pdb = (version: string) => ({
    status: 200,
    body: {
      resources: [{ name: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', namespaced: true, verbs: ['list', 'watch'] }],
      groupVersion: `policy/${version}`,
    },
  });
  const fetchJson: FetchJson = async (path) => {
    switch (path) {
      case '/api':
        return { status: 200, body: { versions: [] } };
      case '/apis':
        return { status: 200, body: { groups: [{ name: 'policy', versions: [{ version: 'v1' }, { version: 'v1beta1' }] }] } };
      case '/apis/policy/v1':
        await v1Answered;
        return pdb('v1');
      case '/apis/policy/v1beta1':
        setImmediate(releaseV1);
        return pdb('v1beta1');
      default:
        return { status: 404, body: {} };
    }
  };
  const all = await new ResourceMapper(fetchJson).all();
  t.deepEqual(
    all.map((r) => `${r.group}/${r.version}`),
    ['policy/v1', 'policy/v1beta1'],
  );
});
