/** `kperturb report`: summarise test results: a table in the terminal, or JSON, JUnit XML and an HTML page. */
import { Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { writeOptionFile } from '../output-file.js';
import { paletteFor } from '../../report/color.js';
import { renderTerminalReport } from '../../report/terminal.js';
import { DEFAULT_RESULTS_DIR, loadResults } from '../../io/results-file.js';
import { buildJsonReport } from '../../report/json.js';
import { renderJUnit } from '../../report/junit.js';
import { writeHtmlReport } from '../../report/html.js';
import { output, log, exitCodeFor, ALLOW_UNTESTED_HELP } from '../common.js';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('summarise test results: a table in the terminal, or JSON, JUnit XML and an HTML page')
    .argument(
      '[results...]',
      `results.json files, verdict.json files or directories to search, e.g. the output directories of a campaign's shards, merged into one report (default: ${DEFAULT_RESULTS_DIR})`,
    )
    .option('--json', 'print the report as JSON instead of a table')
    .option('--junit <file>', 'also write JUnit XML here (for CI systems)')
    .option('--html <file>', 'also write a self-contained HTML page here')
    .option('--allow-untested', ALLOW_UNTESTED_HELP)
    .action(async (targets: string[], opts: { json?: boolean; junit?: string; html?: string; allowUntested?: boolean }) => {
      const loaded = loadResults(targets);
      if (opts.json)
        process.stdout.write(JSON.stringify(buildJsonReport(loaded.results, loaded.sources, loaded.notes, loaded.notRun, loaded.untested), null, 2) + '\n');
      else
        process.stdout.write(
          renderTerminalReport(loaded.results, {
            notes: loaded.notes,
            notRun: loaded.notRun,
            untested: loaded.untested,
            palette: paletteFor(process.stdout, process.env, output.colour),
          }),
        );
      const { junit, html } = opts;
      if (junit) {
        await writeOptionFile('--junit', junit, () => {
          mkdirSync(dirname(resolve(junit)), { recursive: true });
          writeFileSync(junit, renderJUnit(loaded.results, loaded.notRun, loaded.untested));
        });
        log(`JUnit XML written to ${junit}`);
      }
      if (html) {
        await writeOptionFile('--html', html, () => writeHtmlReport(resolve(html), loaded));
        log(`HTML report written to ${html}`);
      }
      process.exitCode = exitCodeFor(loaded.results, loaded.untested, opts.allowUntested === true);
    });
}
