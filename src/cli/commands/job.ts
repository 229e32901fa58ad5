/** `kperturb job`: write a Kubernetes Indexed Job that runs the campaign in N shards, one pod each (docs/sharding.md). */
import { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { loadConfig } from '../../config/config.js';
import { renderJob } from '../../campaign/job.js';
import { writeOptionFile } from '../output-file.js';
import { parseWholeNumber, parallelOption, configOption } from '../common.js';

export function registerJob(program: Command): void {
  program
    .command('job')
    .description('write a Kubernetes Indexed Job that runs the campaign in N shards, one pod each (docs/sharding.md)')
    .requiredOption('--shards <n>', 'how many pods (shards) share the plans', (v: string) => parseWholeNumber(v, '--shards'))
    .requiredOption('--image <ref>', "the image holding kperturb, the controller and the campaign under /campaign (the repository's Containerfile)")
    .addOption(configOption())
    .option('--name <name>', "the Job's name (default: kperturb-<controller>)")
    .option('--namespace <ns>', "the Job's namespace (default: none written, kubectl's current one)")
    .option('--results-claim <pvc>', 'a ReadWriteMany PersistentVolumeClaim the shards write their results to (default: an emptyDir per pod)')
    .addOption(parallelOption(2))
    .option('--output <file>', 'write the manifest here instead of stdout')
    .action(
      async (opts: {
        shards: number;
        image: string;
        config: string;
        name?: string;
        namespace?: string;
        resultsClaim?: string;
        parallel: number;
        output?: string;
      }) => {
        const config = loadConfig(opts.config);
        const yaml = renderJob({
          controller: config.name,
          shards: opts.shards,
          image: opts.image,
          parallel: opts.parallel,
          ...(opts.name ? { name: opts.name } : {}),
          ...(opts.namespace ? { namespace: opts.namespace } : {}),
          ...(opts.resultsClaim ? { resultsClaim: opts.resultsClaim } : {}),
        });
        const output = opts.output;
        if (output) await writeOptionFile('--output', output, () => writeFileSync(output, yaml));
        else process.stdout.write(yaml);
      },
    );
}
