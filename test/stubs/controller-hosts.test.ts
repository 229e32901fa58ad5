/**
 * The controller's names: the hosts entries CoreDNS would answer for a pod (Services, headless
 * Services and their pods), the hosts file rewritten in place as the cluster changes, and what a
 * process run through the mount-namespace wrapper resolves (getent, as glibc's resolver does), with
 * the spawned pid being the command's own.
 */
import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterDnsEntries } from '../../src/model/applications.js';
import type { KubeObject } from '../../src/model/object-key.js';
import type { ObservedChange } from '../../src/recorder/cluster-recorder.js';
import { ControllerHosts } from '../../src/stubs/controller-hosts.js';
import { hostsNamespaceWrapper, POD_SERVICE_ACCOUNT_DIR, writePodFiles } from '../../src/coordinator/hosts-namespace.js';
import { sharedScratchDir } from '../_scratch-dir.js';

const svc = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec,
});
const pod = (name: string, ip: string, extra: { deleting?: boolean; phase?: string } = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app: 'zk' }, ...(extra.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
  spec: { hostname: name, subdomain: 'zk-headless' },
  status: { phase: extra.phase ?? 'Running', podIP: ip },
});

test('CoreDNS names: a Service by its cluster IP, a headless Service by its running pods, and each pod by hostname.subdomain', (t) => {
  const entries = clusterDnsEntries(
    [
      svc('zk-client', { clusterIP: '127.9.0.2' }),
      svc('zk-headless', { clusterIP: 'None', selector: { app: 'zk' } }),
      svc('ext', { type: 'ExternalName', externalName: 'x.example' }),
    ],
    [pod('zk-0', '127.9.128.1'), pod('zk-1', '127.9.128.2', { deleting: true }), pod('zk-2', '127.9.128.3', { phase: 'Pending' })],
  );
  t.deepEqual(entries, [
    { ip: '127.9.0.2', hostnames: ['zk-client.default.svc', 'zk-client.default.svc.cluster.local'] },
    {
      ip: '127.9.128.1',
      hostnames: [
        'zk-0.zk-headless.default.svc',
        'zk-0.zk-headless.default.svc.cluster.local',
        'zk-headless.default.svc',
        'zk-headless.default.svc.cluster.local',
      ],
    },
  ]);
});

test("with the controller's namespace, the names its search list completes resolve too: <svc>, <pod>.<svc> there, <svc>.<ns> everywhere", (t) => {
  const other: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'prod' }, spec: { clusterIP: '127.9.0.3' } };
  const services = [svc('zk-headless', { clusterIP: 'None', selector: { app: 'zk' } }), other];
  const entries = clusterDnsEntries(services, [pod('zk-0', '127.9.128.1')], 'default');
  t.deepEqual(entries, [
    { ip: '127.9.0.3', hostnames: ['db.prod', 'db.prod.svc', 'db.prod.svc.cluster.local'] },
    {
      ip: '127.9.128.1',
      hostnames: [
        'zk-0.zk-headless',
        'zk-0.zk-headless.default',
        'zk-0.zk-headless.default.svc',
        'zk-0.zk-headless.default.svc.cluster.local',
        'zk-headless',
        'zk-headless.default',
        'zk-headless.default.svc',
        'zk-headless.default.svc.cluster.local',
      ],
    },
  ]);
  // Without it, only the names that resolve from any namespace's pods.
  t.deepEqual(clusterDnsEntries(services, [pod('zk-0', '127.9.128.1')])[0], { ip: '127.9.0.3', hostnames: ['db.prod.svc', 'db.prod.svc.cluster.local'] });
});

/** A cluster view fed by hand. */
function fakeView() {
  const past: ObservedChange[] = [];
  const listeners = new Set<(c: ObservedChange) => void>();
  let seq = 0;
  return {
    pastChanges: () => past,
    onChange: (l: (c: ObservedChange) => void) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    emit(obj: KubeObject, deleted = false) {
      const resource = obj.kind === 'Pod' ? 'pods' : 'services';
      const key = `${obj.kind}/${obj.metadata!.namespace}/${obj.metadata!.name}`;
      const c: ObservedChange = {
        type: deleted ? 'DELETED' : 'ADDED',
        key,
        prev: undefined,
        next: deleted ? undefined : obj,
        resourceVersion: String(++seq),
        seq,
        group: '',
        resource,
      };
      past.push(c);
      for (const l of listeners) l(c);
    },
  };
}

test('the hosts file: the machine base, then hostAliases, then the cluster names, rewritten in place as Services come and go', (t) => {
  const dir = sharedScratchDir('kperturb-hosts-');
  const base = join(dir, 'base');
  writeFileSync(base, '127.0.0.1\tlocalhost\n');
  const view = fakeView();
  view.emit(svc('before', { clusterIP: '127.9.0.5' }));
  const hosts = new ControllerHosts(join(dir, 'hosts'), [{ ip: '127.0.0.7', hostnames: ['db.example'] }], view, base);
  t.teardown(() => hosts.stop());
  const inode = statSync(hosts.file).ino;
  t.is(
    readFileSync(hosts.file, 'utf8'),
    '127.0.0.1\tlocalhost\n# kperturb: controller.hostAliases\n127.0.0.7\tdb.example\n# kperturb: controller.clusterDNS (Services and pods of the cluster)\n127.9.0.5\tbefore.default.svc before.default.svc.cluster.local\n',
  );
  view.emit(svc('zk-client', { clusterIP: '127.9.0.2' }));
  t.regex(readFileSync(hosts.file, 'utf8'), /127\.9\.0\.2\tzk-client\.default\.svc zk-client\.default\.svc\.cluster\.local\n127\.9\.0\.5\tbefore/);
  view.emit(svc('before', { clusterIP: '127.9.0.5' }), true);
  t.notRegex(readFileSync(hosts.file, 'utf8'), /before/);
  // A bind mount follows the inode: the file must never be replaced.
  t.is(statSync(hosts.file).ino, inode);
});

test('through the wrapper, the command resolves the hosts file names (getent) and keeps the spawned pid', async (t) => {
  const dir = sharedScratchDir('kperturb-hosts-');
  const file = join(dir, 'hosts');
  writeFileSync(file, '127.0.0.1\tlocalhost\n127.9.0.2\tzk-client.default.svc.cluster.local zk-client.default.svc\n');
  const wrap = await hostsNamespaceWrapper({ hostsFile: file }, 'test');
  const resolved = await new Promise<string>((resolve, reject) => {
    const { command, args } = wrap('getent', ['hosts', 'zk-client.default.svc.cluster.local']);
    execFile(command, args, (err, stdout, stderr) => (err ? reject(new Error(`${err.message} ${stderr}`)) : resolve(stdout)));
  });
  t.regex(resolved, /^127\.9\.0\.2\s+zk-client\.default\.svc\.cluster\.local/);
  // The machine's own /etc/hosts is untouched.
  t.notRegex(readFileSync('/etc/hosts', 'utf8'), /zk-client/);
  // unshare and sh exec in place: the pid kperturb kills is the command's.
  const { command, args } = wrap('sh', ['-c', 'echo $$']);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.on('close', resolve));
  t.is(Number(out.trim()), child.pid ?? -1);
});

test("controller.podNamespaceFile: through the wrapper the pod's namespace file names the namespace (and the hosts file still applies); the machine has no such file", async (t) => {
  const dir = sharedScratchDir('kperturb-podfiles-');
  const file = join(dir, 'hosts');
  writeFileSync(file, '127.0.0.1\tlocalhost\n127.9.0.2\tzk-client.default.svc\n');
  const nsFile = join(POD_SERVICE_ACCOUNT_DIR, 'namespace');
  const before = existsSync(nsFile) ? readFileSync(nsFile, 'utf8') : undefined;
  const wrap = await hostsNamespaceWrapper({ hostsFile: file, podFiles: writePodFiles(dir, 'psmdb') }, 'test');
  const out = await new Promise<string>((resolve, reject) => {
    const { command, args } = wrap('sh', ['-c', `cat ${nsFile}; echo; getent hosts zk-client.default.svc`]);
    execFile(command, args, (err, stdout, stderr) => (err ? reject(new Error(`${err.message} ${stderr}`)) : resolve(stdout)));
  });
  t.regex(out, /^psmdb\n127\.9\.0\.2\s+zk-client\.default\.svc/);
  // Outside the controller's mount namespace nothing changed.
  t.is(existsSync(nsFile) ? readFileSync(nsFile, 'utf8') : undefined, before);
});
