/**
 * Fixed ports (`controller.ports`): runs of controllers that bind the same port take turns, in one
 * kperturb process and across processes, and wait while another program listens there.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { lockPorts } from '../../src/coordinator/port-locks.js';
import { freePort } from '../_free-port.js';
import { scratchDir } from '../_scratch-dir.js';

function lockDir(t: import('ava').ExecutionContext): string {
  return scratchDir(t, 'kperturb-port-locks-');
}

test('a second run waits for the first to release the port, then gets it', async (t) => {
  const dir = lockDir(t);
  const port = await freePort();
  const events: string[] = [];
  const releaseFirst = await lockPorts([port], { dir });
  events.push('first locked');
  const waited = new Promise<string>((resolve) => {
    void lockPorts([port], { dir, onWait: (_p, reason) => resolve(reason) }).then((release) => {
      events.push('second locked');
      release();
    });
  });
  t.regex(await waited, new RegExp(`^held by pid ${process.pid}$`));
  events.push('first releases');
  releaseFirst();
  await new Promise<void>((resolve) => {
    const check = () => (events.includes('second locked') ? resolve() : setImmediate(check));
    check();
  });
  t.deepEqual(events, ['first locked', 'first releases', 'second locked']);
  t.false(existsSync(join(dir, `${port}.lock`)), 'released: no lock file left');
});

test('a lock whose process is gone is taken over at once', async (t) => {
  const dir = lockDir(t);
  const port = await freePort();
  // A pid that existed and has exited.
  const child = spawn(process.execPath, ['-e', '']);
  const deadPid = await new Promise<number>((resolve) => child.on('exit', () => resolve(child.pid!)));
  writeFileSync(join(dir, `${port}.lock`), String(deadPid));
  let waitedFor: string | undefined;
  const release = await lockPorts([port], { dir, onWait: (_p, reason) => (waitedFor = reason) });
  t.is(waitedFor, undefined);
  release();
});

test('a port another program listens on is waited for until it closes', async (t) => {
  const dir = lockDir(t);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const { port } = server.address() as AddressInfo;
  let locked = false;
  const waiting = new Promise<string>((resolve) => {
    void lockPorts([port], { dir, onWait: (_p, reason) => resolve(reason) }).then((release) => {
      locked = true;
      release();
    });
  });
  t.is(await waiting, `something else is listening on port ${port}`);
  t.false(locked);
  t.false(existsSync(join(dir, `${port}.lock`)), 'no lock held while waiting for another program');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await new Promise<void>((resolve) => {
    const check = () => (locked ? resolve() : setTimeout(check, 20));
    check();
  });
  t.true(locked);
});

test('gives up with the port named once the timeout passes', async (t) => {
  const dir = lockDir(t);
  const port = await freePort();
  const release = await lockPorts([port], { dir });
  t.teardown(release);
  await t.throwsAsync(lockPorts([port], { dir, timeoutMs: 0 }), { message: new RegExp(`^port ${port} stayed busy \\(held by pid ${process.pid}\\)`) });
});

test("application stubs' ports are shared: stub runs coexist, a controller binding the port waits for them, and new stub runs wait behind it", async (t) => {
  const dir = lockDir(t);
  const port = await freePort();
  const stubs = { exclusive: [], shared: [port] };
  let waited: string | undefined;
  const first = await lockPorts(stubs, { dir });
  const second = await lockPorts(stubs, { dir, onWait: (_p, reason) => (waited = reason) });
  t.is(waited, undefined, 'two runs with stubs on the port take it at once');
  const events: string[] = [];
  const controllerWaits = new Promise<string>((resolve) => {
    void lockPorts([port], { dir, onWait: (_p, reason) => resolve(reason) }).then((release) => {
      events.push('controller locked');
      release();
      events.push('controller released');
    });
  });
  t.is(await controllerWaits, `an application stub of pid ${process.pid} listens on port ${port}`);
  const thirdWaits = new Promise<string>((resolve) => {
    void lockPorts(stubs, { dir, onWait: (_p, reason) => resolve(reason) }).then((release) => {
      events.push('third stub run locked');
      release();
    });
  });
  t.is(await thirdWaits, `held by pid ${process.pid}, whose controller binds it`);
  events.push('stub runs release');
  first();
  second();
  await new Promise<void>((resolve) => {
    const check = () => (events.includes('third stub run locked') ? resolve() : setTimeout(check, 20));
    check();
  });
  t.deepEqual(events, ['stub runs release', 'controller locked', 'controller released', 'third stub run locked']);
});

test('a stub run waits while a controller holds the port', async (t) => {
  const dir = lockDir(t);
  const port = await freePort();
  const controller = await lockPorts([port], { dir });
  let locked = false;
  const waiting = new Promise<string>((resolve) => {
    void lockPorts({ exclusive: [], shared: [port] }, { dir, onWait: (_p, reason) => resolve(reason) }).then((release) => {
      locked = true;
      release();
    });
  });
  t.is(await waiting, `held by pid ${process.pid}, whose controller binds it`);
  t.false(locked);
  controller();
  await new Promise<void>((resolve) => {
    const check = () => (locked ? resolve() : setTimeout(check, 20));
    check();
  });
  t.pass();
});

test("a stub run that waits goes before a controller's run that came after it", async (t) => {
  const dir = lockDir(t);
  const port = await freePort();
  const events: string[] = [];
  const first = await lockPorts([port], { dir });
  // The stub run looks again only every 2 s, the later controller run every 10 ms: by polling alone,
  // the controller run would take the port as soon as the first one lets it go.
  const stubWaits = new Promise<string>((resolve) => {
    void lockPorts({ exclusive: [], shared: [port] }, { dir, pollMs: 2000, onWait: (_p, reason) => resolve(reason) }).then((release) => {
      events.push('stub run locked');
      release();
      events.push('stub run released');
    });
  });
  t.is(await stubWaits, `held by pid ${process.pid}, whose controller binds it`);
  const laterLocked = new Promise<void>((resolve) => {
    void lockPorts([port], { dir, pollMs: 10 }).then((release) => {
      events.push('later controller run locked');
      release();
      resolve();
    });
  });
  first();
  await laterLocked;
  t.deepEqual(events, ['stub run locked', 'stub run released', 'later controller run locked']);
});

test("a stub run that queued in the millisecond a controller's run starts in still goes first", async (t) => {
  const dir = lockDir(t);
  const port = await freePort();
  // Written as a waiting stub run writes it, and taken at once: mostly within the same millisecond.
  for (let i = 0; i < 20; i++) {
    const queued = join(dir, `${port}.queued-shared.${process.pid}.same-ms`);
    writeFileSync(queued, JSON.stringify({ pid: process.pid, since: new Date().toISOString() }) + '\n');
    await t.throwsAsync(lockPorts([port], { dir, timeoutMs: 0 }), { message: /an application stub run of pid \d+ waits for it since before this run/ });
  }
});
