// What a bench section reports: named figures with units; a section measures and never passes or fails on time.
export interface Figure {
  name: string;
  value: number | undefined;
  unit: string;
  note?: string;
}

export interface BenchSection {
  name: string;
  run(log: (line: string) => void): Promise<Figure[]>;
}

/** Seconds to 0.1; whole counts as they are; small rates (below 10) to 0.01 so 0.05 does not print as 0. */
export function formatValue(value: number, unit: string): string {
  if (unit === 's') return value.toFixed(1);
  if (Number.isInteger(value)) return String(value);
  return value < 10 ? value.toFixed(2) : value.toFixed(0);
}

export function formatTable(rows: Array<{ section: string } & Figure>): string {
  const cells = rows.map((r) => [
    r.section,
    r.name,
    r.value === undefined ? 'n/a' : `${formatValue(r.value, r.unit)} ${r.unit}`,
    r.note ?? '',
  ]);
  const header = ['section', 'figure', 'value', 'note'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}
