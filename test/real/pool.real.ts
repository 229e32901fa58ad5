/**
 * The ControlPlanePool (src/realcluster/pool.ts): what it hands out is as fresh as a control plane
 * started on the spot (the isolation between plans on the real tier), a pooled cluster's logs end up
 * where its user asked, and close() leaves no process behind.
 */
import test, { type ExecutionContext } from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient } from '../../src/kube/client.js';
import { ControlPlanePool, RealCluster, type RealControlPlane } from '../../src/realcluster/index.js';
import { eventually, processExists } from './_helpers.js';
import { scratchDir } from '../_scratch-dir.js';

/** The etcd pids the pool's control planes reported, in start order. */
function etcdPids(): { log: (line: string) => void; pids: number[] } {
  const pids: number[] = [];
  return {
    pids,
    log: (line) => {
      const m = /etcd ready .*pid (\d+)/.exec(line);
      if (m) pids.push(Number(m[1]));
    },
  };
}

/** A pool whose control planes, and the pool itself, are stopped when the test ends. */
function poolFor(t: ExecutionContext, takes: number, log?: (line: string) => void): { take(): Promise<RealControlPlane>; pool: ControlPlanePool } {
  const pool = new ControlPlanePool(log ? { log } : {}, takes);
  t.teardown(() => pool.close());
  return {
    pool,
    take: async () => {
      const cp = await pool.take();
      t.teardown(() => cp.stop());
      return cp;
    },
  };
}

test.serial('each control plane the pool hands out is fresh: nothing written on the one before is in it', async (t) => {
  const etcd = etcdPids();
  const pool = poolFor(t, 2, etcd.log);
  const first = await pool.take();
  const client1 = new KubeClient(first.url, first.clientOptions());
  t.teardown(() => client1.close());
  t.is((await client1.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'left-behind' } } })).status, 201);
  const ns1 = (await client1.request('GET', '/api/v1/namespaces/default')).body as { metadata: { uid: string } };

  // Taken while the first is still running and in use, as the next plan of a campaign would.
  const second = await pool.take();
  t.true(processExists(first.pids.apiserver!), 'taking the next one leaves the first alone');
  const client2 = new KubeClient(second.url, second.clientOptions());
  t.teardown(() => client2.close());
  t.is((await client2.request('GET', '/api/v1/namespaces/default/configmaps/left-behind')).status, 404);
  const ns2 = (await client2.request('GET', '/api/v1/namespaces/default')).body as { metadata: { uid: string } };
  t.not(ns2.metadata.uid, ns1.metadata.uid, 'the default namespace is a new object');
  t.not(second.url, first.url);
  t.not(second.caPem, first.caPem, 'new credentials');
  t.not(second.workDir, first.workDir);
  t.not(second.pids.etcd, first.pids.etcd, 'a separate etcd');
  t.deepEqual(etcd.pids, [first.pids.etcd, second.pids.etcd], 'two takes, two starts');
});

test.serial('close() stops the control plane prepared for a take that never came', async (t) => {
  const etcd = etcdPids();
  const { pool, take } = poolFor(t, 3, etcd.log);
  const taken = await take();
  // The next one starts once the taken one is ready; wait until it is up.
  await eventually('the pool prepares the next control plane', 60_000, async () => (etcd.pids.length >= 2 ? true : undefined));
  const preparedEtcd = etcd.pids[1]!;
  t.not(preparedEtcd, taken.pids.etcd);
  await pool.close();
  t.false(processExists(preparedEtcd), "the prepared control plane's etcd has ended");
  t.true(processExists(taken.pids.etcd!), 'the taken one is its taker’s to stop');
  await t.throwsAsync(pool.take(), { message: /after close/ });
});

test.serial("a pooled cluster's stop() keeps the components' logs in the directory it was given", async (t) => {
  const { pool } = poolFor(t, 1);
  const logDir = join(scratchDir(t, 'kperturb-pool-logs-'), 'control-plane');
  const cluster = await RealCluster.start({ pool, logDir, simulation: false });
  const workDir = cluster.controlPlane.workDir;
  await cluster.stop();
  t.false(existsSync(workDir), 'the working directory (etcd data, credentials) is deleted');
  for (const file of ['etcd.log', 'kube-apiserver.log', 'kube-controller-manager.log']) {
    t.true(existsSync(join(logDir, file)), `${file} is kept`);
  }
  t.regex(readFileSync(join(logDir, 'kube-apiserver.log'), 'utf8'), /Serving securely on 127\.0\.0\.1/);
});
