#!/usr/bin/env node
// Thin launcher: the CLI is compiled TypeScript under dist/ (built by `npm ci` through `prepare`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('kperturb: not built yet; run `npm run build` in the kperturb checkout\n');
  process.exit(2);
}
await import(entry.href);
