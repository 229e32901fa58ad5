/**
 * Writes `kperturb init`'s proposal as kperturb.yaml text: every choice with a comment saying where
 * it came from, and the questions init could not answer at the end. `seeds:` is written only when
 * this kperturb's config format has it (the schema decides), so the file always loads.
 */
import { stringify } from 'yaml';
import type { InitProposal } from './propose.js';

const scalar = (v: unknown): string => stringify(v, { lineWidth: 0, flowCollectionPadding: false }).trimEnd();
const flow = (items: string[]): string => `[${items.map(scalar).join(', ')}]`;

function comment(text: string, indent = ''): string[] {
  // Comments wrap at 100 columns so the file reads in an editor.
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + word.length + 1 > 100 - indent.length - 2) {
      out.push(`${indent}# ${line}`);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(`${indent}# ${line}`);
  return out;
}

export interface RenderOptions {
  /** The config format has `seeds:` (explore's seed CRs). */
  seedsKey: boolean;
  /** What the binary was built from, or why it was not. */
  buildNote: string;
}

export function renderConfig(p: InitProposal, opts: RenderOptions): string {
  const out: string[] = [];
  out.push(
    ...comment(
      `Written by \`kperturb init\` from this repository (layout: ${p.layout}). Each choice says where it came from; what init could not decide is listed at the end. Check the file, then run \`kperturb learn\`.`,
    ),
  );
  out.push('apiVersion: kperturb.dev/v1', 'kind: ControllerUnderTest', 'metadata:', `  name: ${scalar(p.name)}`, 'controller:');
  out.push(...comment(opts.buildNote, '  '));
  out.push(`  command: ${scalar(p.binary)}`);
  if (p.args.value.length > 0) {
    out.push(...comment(`args ${p.args.why}`, '  '));
    if (p.leaderElection)
      out.push(...comment("Leader election stays on: at a restart kperturb deletes the dead controller's Lease, so the new one leads at once.", '  '));
    out.push(`  args: ${flow(p.args.value)}`);
  }
  if (p.env.length > 0) {
    out.push('  env:');
    // Variables that came from the same place share one comment (a Deployment can give dozens).
    p.env.forEach((e, i) => {
      if (e.why !== p.env[i - 1]?.why) out.push(...comment(e.why, '    '));
      out.push(`    ${e.name}: ${scalar(e.value)}`);
    });
  }
  if (p.podNamespaceFile) {
    out.push(...comment(p.podNamespaceFile.why, '  '));
    out.push(`  namespace: ${scalar(p.podNamespaceFile.value)}`, '  podNamespaceFile: true');
  }
  if (p.unsetEnv.length > 0) out.push(...comment(`The operator's code also reads ${p.unsetEnv.join(', ')}; kperturb leaves them unset.`, '  '));
  if (p.webhookServer) {
    out.push(...comment(p.webhookServer.why, '  '));
    out.push(`  webhookServer: { port: ${p.webhookServer.value.port} }`);
    if (!p.ports) out.push('  maxParallel: 1');
  }
  if (p.ports) {
    out.push(...comment(p.ports.why, '  '));
    out.push(`  ports: [${p.ports.value.join(', ')}]`, '  maxParallel: 1');
  }
  if (p.applications.length > 0) {
    out.push(...comment("The cluster's names resolve for the operator, as in a pod: it reaches its application by Service name.", '  '));
    out.push('  clusterDNS: true');
  }
  if (p.kubernetesVersion) {
    out.push(...comment(p.kubernetesVersion.why));
    out.push(
      `cluster: { kubernetesVersion: ${scalar(p.kubernetesVersion.value).includes('"') ? scalar(p.kubernetesVersion.value) : `"${p.kubernetesVersion.value}"`} }`,
    );
  }
  if (p.applications.length > 0) out.push('applications:');
  for (const a of p.applications) {
    out.push(...comment(a.why, '  '));
    const { name, protocol, port, namespace } = a.value;
    out.push(`  - name: ${scalar(name)}`, `    protocol: ${protocol}`, `    port: ${port}`);
    if (namespace !== 'default') out.push(`    namespace: ${scalar(namespace)}`);
    out.push('    matchPort: true');
  }
  // The CRD copies init writes are listed with the CRDs.
  const setupFiles = p.extraFiles.filter((f) => !f.controller && !p.crdFiles.value.includes(f.file));
  out.push(p.crdFiles.value.length + setupFiles.length > 0 ? 'setup:' : 'setup: []');
  for (const f of setupFiles) {
    out.push(...comment(f.why, '  '));
    out.push(`  - ${scalar(f.file)}`);
  }
  out.push(...comment(p.crdFiles.why || 'No CRD found: list the files the operator needs here.', '  '));
  for (const f of p.crdFiles.value) out.push(`  - ${scalar(f)}`);
  if (opts.seedsKey && p.seeds.value.length > 0) {
    out.push(...comment(`Seed CRs for \`kperturb explore\`: ${p.seeds.why}.`));
    out.push('seeds:');
    for (const f of p.seeds.value) out.push(`  - ${scalar(f)}`);
  }
  if (p.otherSamples.length > 0) out.push(...comment(`Samples of the other kinds, to add as seeds or workload steps: ${p.otherSamples.join(', ')}.`));
  out.push('workloads:');
  out.push(...comment('The seed, created: the reference runs of a first campaign (`kperturb learn`, `plan`, `test`).', '  '));
  out.push('  create-seed:', '    steps:');
  if (p.seeds.value.length > 0) for (const f of p.seeds.value) out.push(`      - apply: ${scalar(f)}`);
  else out.push('      - sleep: 1');
  if (p.questions.length > 0) {
    out.push('', '# Questions `kperturb init` could not answer (answer them, then delete these lines):');
    for (const q of p.questions) out.push(...comment(`- ${q}`));
  }
  return `${out.join('\n')}\n`;
}
