/** Plain-text tables for terminal summaries; cells may be coloured (colour codes take no width). */
import { visibleLength } from './color.js';

export function renderTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => visibleLength(r[i] ?? ''))));
  const pad = (c: string, w: number) => c + ' '.repeat(Math.max(0, w - visibleLength(c)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : pad(c, widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
