/** `kperturb schema`: print the JSON Schema of kperturb.yaml (config) or of a TestPlan (plan), for editors (yaml-language-server) and CI checks. */
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { UserInputError } from '../../model/errors.js';

export function registerSchema(program: Command): void {
  program
    .command('schema')
    .description('print the JSON Schema of kperturb.yaml (config) or of a TestPlan (plan), for editors (yaml-language-server) and CI checks')
    .argument('[which]', 'config or plan', 'config')
    .option('--path', 'print the path of the schema file (in this installation) instead of its content')
    .action(async (which: string, opts: { path?: boolean }) => {
      const { SCHEMA_NAMES, schemaFile } = await import('../../io/schemas.js');
      if (!(SCHEMA_NAMES as readonly string[]).includes(which))
        throw new UserInputError(undefined, 'schema', `one of ${SCHEMA_NAMES.join(', ')} (got ${JSON.stringify(which)})`);
      const file = schemaFile(which as (typeof SCHEMA_NAMES)[number]);
      process.stdout.write(opts.path ? `${file}\n` : readFileSync(file, 'utf8'));
    });
}
