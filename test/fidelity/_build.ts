/**
 * Builds the Go probe before the matrix registers its cells (scripts/build-go-probe.sh: a no-op when
 * up to date, nothing at all without `go`, in which case the Go cells skip themselves with the reason).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../../scripts/build-go-probe.sh', import.meta.url));

export function buildGoProbe(): void {
  const r = spawnSync('sh', [script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scripts/build-go-probe.sh failed (exit ${r.status}):\n${r.stderr}`);
}
