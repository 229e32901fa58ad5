// Folder cycles (npm run check:cycles, run by npm run lint): fails when two folders import each
// other, directly or round a longer loop. The units are the top-level folders (proxy/, planner/,
// oracles/, test/, fixtures/, ...) and, since src/ holds every layer, each folder under src/
// (src/model, src/coordinator, ...); a folder's subfolders count as the folder (src/cluster/sim is
// src/cluster). Every import counts, `import type` included: a type is a concept with a home too.
// Reads the TypeScript sources with the compiler's own import scanner, so it needs no build.
// Prints the folder graph's strongly connected components and, for each, one import per edge of it.
import ts from 'typescript';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const SKIP = new Set(['node_modules', 'dist', '.git', 'operators', 'go']);

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name) || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

/** The folder a file belongs to: `src/<folder>` under src/, else its top-level folder. */
function unitOf(file) {
  const parts = relative(root, file).split(sep);
  if (parts.length < 2) return undefined; // a file at the top (eslint.config.js): not a folder
  return parts[0] === 'src' && parts.length > 2 ? `src/${parts[1]}` : parts[0];
}

/** from -> to -> one example import `file -> specifier` */
const edges = new Map();
for (const top of readdirSync(root)) {
  const dir = join(root, top);
  if (SKIP.has(top) || top.startsWith('.') || !statSync(dir).isDirectory()) continue;
  for (const file of sources(dir)) {
    const from = unitOf(file);
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = unitOf(resolve(dirname(file), fileName));
      if (!to || to === from) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      if (!edges.get(from).has(to)) edges.get(from).set(to, `${relative(root, file)} imports ${fileName}`);
    }
  }
}

// Tarjan's strongly connected components over the folder graph.
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
let next = 0;
function visit(v) {
  index.set(v, next);
  low.set(v, next++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    for (let w; w !== v;) {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    }
    if (component.length > 1) components.push(component.sort());
  }
}
for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);

if (components.length === 0) {
  console.log(`check-cycles: no cycle between ${new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]).size} folders`);
} else {
  for (const component of components) {
    console.error(`check-cycles: these folders import each other: ${component.join(', ')}`);
    const members = new Set(component);
    for (const from of component) {
      for (const [to, example] of [...edges.get(from)].sort()) if (members.has(to)) console.error(`  ${from} -> ${to}: ${example}`);
    }
  }
  process.exitCode = 1;
}
