#!/usr/bin/env node
// Writes vendor/kubernetes-proto/schema.generated.ts from the vendored generated.proto files (parsed with
// protobufjs: field numbers and wire types) and the Go JSON facts printed by
// scripts/protobuf-json-fields (JSON names, omitempty, inlining, Go shapes). Every Go field is checked
// against the .proto field with the same number, so a mismatch between the two sources fails here.
//
//   node scripts/gen-k8s-protobuf-schema.mjs JSON_FIELDS_FILE
// (scripts/gen-k8s-protobuf-schema.sh runs both steps.)
import { readFileSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const protoDir = join(root, 'vendor/kubernetes-proto/proto');
const outFile = join(root, 'vendor/kubernetes-proto/schema.generated.ts');
const SCALARS = new Set([
  'double',
  'float',
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
  'bool',
  'string',
  'bytes',
]);
const GO_SCALAR_SHAPES = new Set(['string', 'bool', 'int', 'uint', 'float']);

function fail(message) {
  console.error(`gen-k8s-protobuf-schema: ${message}`);
  process.exit(1);
}

function protoFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return protoFiles(p);
    return name.endsWith('.proto') ? [relative(protoDir, p)] : [];
  });
}

const factsFile = process.argv[2];
if (!factsFile) fail('usage: gen-k8s-protobuf-schema.mjs JSON_FIELDS_FILE');
const facts = JSON.parse(readFileSync(factsFile, 'utf8'));
const version = readFileSync(join(protoDir, 'VERSION'), 'utf8').trim();

const pbRoot = new protobuf.Root();
pbRoot.resolvePath = (_origin, target) => join(protoDir, target);
pbRoot.loadSync(protoFiles(protoDir).sort(), { keepCase: true });
pbRoot.resolveAll();

function lookupType(name) {
  try {
    return pbRoot.lookupType(name);
  } catch {
    return undefined;
  }
}

function typeOf(pbField) {
  if (pbField.resolvedType) return pbField.resolvedType.fullName.replace(/^\./, '');
  if (!SCALARS.has(pbField.type)) fail(`${pbField.fullName}: unresolved type ${pbField.type}`);
  return pbField.type;
}

const messages = {};
for (const name of Object.keys(facts.messages).sort()) {
  const goMessage = facts.messages[name];
  const pbType = lookupType(name);
  if (!pbType) fail(`Go type ${goMessage.goType} has no message ${name} in the .proto files`);
  const where = `${name} (${goMessage.goType})`;
  if (goMessage.special) {
    messages[name] = { special: goMessage.special, fields: [] };
    continue;
  }
  if (goMessage.wrapper) {
    const items = pbType.fieldsById[1];
    if (!items || !items.repeated || pbType.fieldsArray.length !== 1) fail(`${where}: a Go slice type whose message is not { repeated items = 1 }`);
    messages[name] = { wrapper: true, fields: [{ number: 1, json: 'items', shape: 'slice', type: typeOf(items), repeated: true }] };
    continue;
  }
  const goFields = goMessage.fields ?? [];
  if (goFields.length !== pbType.fieldsArray.length) {
    fail(`${where}: Go has ${goFields.length} protobuf fields, the .proto has ${pbType.fieldsArray.length}`);
  }
  const fields = [];
  for (const g of goFields) {
    const pb = pbType.fieldsById[g.number];
    if (!pb) fail(`${where}.${g.goName}: no field number ${g.number} in the .proto`);
    // A tag may leave the name out (EphemeralContainer's `protobuf:"bytes,1,req"`): the number decides.
    if (g.protoName && pb.name !== g.protoName) fail(`${where}.${g.goName}: .proto field ${g.number} is ${pb.name}, Go says ${g.protoName}`);
    const field = { number: g.number };
    if (g.inline) {
      if (g.shape !== 'struct' || !pb.resolvedType) fail(`${where}.${g.goName}: inlined field is not a message`);
    } else {
      field.json = g.json;
    }
    if (g.omitempty) field.omitempty = true;
    field.shape = g.shape;
    field.type = typeOf(pb);
    const isMessage = !!pb.resolvedType && !pb.map;
    if (pb.map) {
      if (g.shape !== 'map') fail(`${where}.${g.goName}: proto map but Go ${g.shape}`);
      field.mapKey = pb.keyType;
    } else if (pb.repeated) {
      if (g.shape !== 'slice') fail(`${where}.${g.goName}: repeated in the .proto but Go ${g.shape}`);
      field.repeated = true;
    } else if (isMessage) {
      const target = facts.messages[field.type];
      const ok = g.shape === 'struct' || g.shape === 'pointer' || (g.shape === 'slice' && target?.wrapper);
      if (!ok) fail(`${where}.${g.goName}: message ${field.type} but Go ${g.shape}`);
    } else if (pb.type === 'bytes') {
      if (g.shape !== 'bytes') fail(`${where}.${g.goName}: bytes but Go ${g.shape}`);
    } else if (g.shape !== 'pointer' && !GO_SCALAR_SHAPES.has(g.shape)) {
      fail(`${where}.${g.goName}: scalar ${pb.type} but Go ${g.shape}`);
    }
    fields.push(field);
  }
  messages[name] = { fields };
}
for (const [name, m] of Object.entries(messages)) {
  for (const f of m.fields) {
    if (!SCALARS.has(f.type) && !messages[f.type]) fail(`${name}: field ${f.number} refers to ${f.type}, which the Go walk did not reach`);
  }
}

const kinds = {};
for (const k of facts.kinds) {
  if (!messages[k.message]) fail(`kind ${k.apiVersion} ${k.kind}: no message ${k.message}`);
  (kinds[k.apiVersion] ??= {})[k.kind] = k.message;
}

function fieldNumber(typeName, fieldName) {
  const f = lookupType(typeName)?.fields[fieldName];
  if (!f) fail(`envelope: ${typeName}.${fieldName} missing from the .proto files`);
  return f.id;
}
const unknown = 'k8s.io.apimachinery.pkg.runtime.Unknown';
const typeMeta = 'k8s.io.apimachinery.pkg.runtime.TypeMeta';
const envelope = {
  typeMeta: fieldNumber(unknown, 'typeMeta'),
  raw: fieldNumber(unknown, 'raw'),
  contentEncoding: fieldNumber(unknown, 'contentEncoding'),
  contentType: fieldNumber(unknown, 'contentType'),
  apiVersion: fieldNumber(typeMeta, 'apiVersion'),
  kind: fieldNumber(typeMeta, 'kind'),
};

const lines = [];
lines.push('// Code generated by scripts/gen-k8s-protobuf-schema.sh from k8s.io/api and k8s.io/apimachinery');
lines.push(`// ${version} (vendor/kubernetes-proto/proto/, Apache-2.0). DO NOT EDIT.`);
lines.push("import type { KubernetesProtobufSchema } from '../../src/model/protobuf-schema.js';");
lines.push('');
lines.push('export const schema: KubernetesProtobufSchema = {');
lines.push(`  version: ${JSON.stringify(version)},`);
lines.push(`  envelope: ${JSON.stringify(envelope)},`);
lines.push('  kinds: {');
for (const apiVersion of Object.keys(kinds).sort()) {
  lines.push(`    ${JSON.stringify(apiVersion)}: {`);
  for (const kind of Object.keys(kinds[apiVersion]).sort()) lines.push(`      ${JSON.stringify(kind)}: ${JSON.stringify(kinds[apiVersion][kind])},`);
  lines.push('    },');
}
lines.push('  },');
lines.push('  messages: {');
for (const name of Object.keys(messages).sort()) {
  const m = messages[name];
  const head = [m.special ? `special: ${JSON.stringify(m.special)}` : '', m.wrapper ? 'wrapper: true' : ''].filter(Boolean).join(', ');
  if (m.fields.length === 0) {
    lines.push(`    ${JSON.stringify(name)}: { ${head ? head + ', ' : ''}fields: [] },`);
    continue;
  }
  lines.push(`    ${JSON.stringify(name)}: {${head ? ' ' + head + ',' : ''}`);
  lines.push('      fields: [');
  for (const f of m.fields) {
    const parts = Object.entries(f).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
    lines.push(`        { ${parts.join(', ')} },`);
  }
  lines.push('      ],');
  lines.push('    },');
}
lines.push('  },');
lines.push('};');
writeFileSync(outFile, lines.join('\n') + '\n');
console.log(`wrote ${relative(root, outFile)}: ${Object.keys(messages).length} messages, ${facts.kinds.length} kinds (${version})`);
