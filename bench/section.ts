// What a bench section reports: named figures with units; a section measures and never passes or fails on time.
export interface Figure {
  name: string;
  value: number | undefined;
  unit: string;
  note?: string;
  /** Repeated figures: the smallest and largest of the runs whose median `value` is, and how many runs. */
  spread?: Spread;
  /** The same step done by the bare platform in the same run (same unit); `value / floor` is printed beside it. */
  floor?: number;
}

export interface Spread {
  min: number;
  max: number;
  runs: number;
}

export interface BenchSection {
  name: string;
  run(log: (line: string) => void): Promise<Figure[]>;
}

/** The middle sample (the mean of the middle two for an even count); undefined for none. */
export function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** The median of the runs and their spread; a run that produced no sample (undefined) is left out. */
export function summarize(samples: ReadonlyArray<number | undefined>): {
  value: number | undefined;
  spread: Spread | undefined;
} {
  const xs = samples.filter((x): x is number => x !== undefined && Number.isFinite(x));
  if (xs.length === 0) return { value: undefined, spread: undefined };
  return { value: median(xs), spread: { min: Math.min(...xs), max: Math.max(...xs), runs: xs.length } };
}

/** Seconds to 0.1 (to 0.01 below 1 s); whole counts as they are; small rates (below 10) to 0.01 so 0.05 does not print as 0. */
export function formatValue(value: number, unit: string): string {
  if (unit === 's') return value < 1 ? value.toFixed(2) : value.toFixed(1);
  if (Number.isInteger(value)) return String(value);
  return value < 10 ? value.toFixed(2) : value.toFixed(0);
}

/** `min-max (n)`, in the figure's own precision; empty for a figure measured once. */
export function formatSpread(spread: Spread | undefined, unit: string): string {
  if (!spread || spread.runs < 2) return '';
  return `${formatValue(spread.min, unit)}-${formatValue(spread.max, unit)} (${spread.runs})`;
}

/** value / floor as `2.3x`; empty without both or with a floor of 0. */
export function formatRatio(value: number | undefined, floor: number | undefined): string {
  if (value === undefined || floor === undefined || floor <= 0) return '';
  return `${(value / floor).toFixed(1)}x`;
}

export function formatTable(rows: Array<{ section: string } & Figure>): string {
  // The spread, floor and ratio columns appear only when some figure has them, so single-shot sections read as before.
  const extended = rows.some((r) => r.spread !== undefined || r.floor !== undefined);
  const cells = rows.map((r) => [
    r.section,
    r.name,
    r.value === undefined ? 'n/a' : `${formatValue(r.value, r.unit)} ${r.unit}`,
    ...(extended
      ? [
          formatSpread(r.spread, r.unit),
          r.floor === undefined ? '' : `${formatValue(r.floor, r.unit)} ${r.unit}`,
          formatRatio(r.value, r.floor),
        ]
      : []),
    r.note ?? '',
  ]);
  const header = [
    'section',
    'figure',
    'value',
    ...(extended ? ['min-max (runs)', 'floor', 'ratio'] : []),
    'note',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}
