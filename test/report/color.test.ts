import test from 'ava';
import { colourWanted, COLOURED, PLAIN, visibleLength } from '../../src/report/color.js';
import { renderTable } from '../../src/report/table.js';
import { renderTerminalReport } from '../../src/report/terminal.js';
import { loadResults } from '../../src/io/results-file.js';
import { makeCampaign } from './_fixture.js';

const tty = { isTTY: true };
const pipe = { isTTY: false };

test('colour: on a terminal only; NO_COLOR (any value) and TERM=dumb turn it off; FORCE_COLOR forces it; --no-color wins', (t) => {
  t.true(colourWanted(tty, {}));
  t.false(colourWanted(pipe, {}));
  t.false(colourWanted(tty, { NO_COLOR: '1' }));
  t.false(colourWanted(tty, { NO_COLOR: 'false' }), 'NO_COLOR set to anything but empty');
  t.true(colourWanted(tty, { NO_COLOR: '' }), 'an empty NO_COLOR is unset');
  t.false(colourWanted(tty, { TERM: 'dumb' }));
  t.true(colourWanted(pipe, { FORCE_COLOR: '1' }));
  t.false(colourWanted(tty, { FORCE_COLOR: '0' }));
  t.false(colourWanted(pipe, { FORCE_COLOR: '1', NO_COLOR: '1' }), 'NO_COLOR wins over FORCE_COLOR');
  t.false(colourWanted(tty, { FORCE_COLOR: '1' }, false), '--no-color wins');
});

test('a table with coloured cells lines up as the plain one does', (t) => {
  const rows = [
    ['a', COLOURED.bad('bug'), '1'],
    ['bbbb', COLOURED.good('pass'), '2'],
  ];
  const coloured = renderTable(['name', 'verdict', 'n'], rows);
  const plain = renderTable(
    ['name', 'verdict', 'n'],
    [
      ['a', 'bug', '1'],
      ['bbbb', 'pass', '2'],
    ],
  );
  t.is(coloured.replace(/\x1b\[\d+m/g, ''), plain);
  t.is(visibleLength(COLOURED.bad('bug')), 3);
});

test('the terminal report paints verdicts only with a colour palette; without one it is plain text', (t) => {
  const { out } = makeCampaign();
  const loaded = loadResults(out);
  const plain = renderTerminalReport(loaded.results);
  t.false(plain.includes('\x1b'));
  t.is(renderTerminalReport(loaded.results, { palette: PLAIN }), plain);
  const coloured = renderTerminalReport(loaded.results, { palette: COLOURED });
  t.true(coloured.includes('\x1b[31mbug\x1b[39m'));
  t.true(coloured.includes('\x1b[32mpass\x1b[39m'));
  t.is(coloured.replace(/\x1b\[\d+m/g, ''), plain, 'the same text once the colour is taken out');
});
