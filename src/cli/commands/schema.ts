/**
 * `kperturb schema`: print the JSON Schema of kperturb.yaml (config) or of a TestPlan (plan), for
 * editors (yaml-language-server) and CI checks. The TestPlan schema is made from the fault registry
 * (src/model/plan-schema.ts); schemas/testplan.schema.json, which `--path` names, is its copy.
 */
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
      const { SCHEMA_NAMES, schema, schemaFile } = await import('../../io/schemas.js');
      if (!(SCHEMA_NAMES as readonly string[]).includes(which))
        throw new UserInputError(undefined, 'schema', `one of ${SCHEMA_NAMES.join(', ')} (got ${JSON.stringify(which)})`);
      const name = which as (typeof SCHEMA_NAMES)[number];
      const file = schemaFile(name);
      if (opts.path) process.stdout.write(`${file}\n`);
      else process.stdout.write(name === 'plan' ? `${JSON.stringify(schema(name), null, 2)}\n` : readFileSync(file, 'utf8'));
    });
}
