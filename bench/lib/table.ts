/** The benchmark's final table: each scenario's paysync figure beside its baseline, the ratio and the goal. */
export interface Row {
  scenario: string;
  paysync: string;
  baseline: string;
  /** paysync / baseline (lower is better), or a ratio between two paysync figures. */
  ratio: number | null;
  goal: string;
  met: boolean | null;
  rssMb?: number;
}

export function renderTable(rows: readonly Row[]): string {
  const header = ['scenario', 'paysync', 'baseline', 'ratio', 'goal', 'met', 'peak RSS'];
  const body = rows.map((r) => [
    r.scenario,
    r.paysync,
    r.baseline,
    r.ratio === null ? '-' : `${r.ratio.toFixed(2)}x`,
    r.goal,
    r.met === null ? '-' : r.met ? 'yes' : 'NO',
    r.rssMb === undefined ? '-' : `${r.rssMb} MB`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

export const seconds = (s: number) => `${s.toFixed(1)} s`;
