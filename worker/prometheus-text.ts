// Formats metric families as Prometheus text exposition 0.0.4, and holds counters, gauges and histograms in memory; no client library.
//
// Invariant: what this prints parses in Prometheus: names are checked when a metric is made, label values
// and help text are escaped, histogram buckets are cumulative and end with le="+Inf" equal to _count.

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  labels: Labels;
  value: number;
}

export interface HistogramSeries {
  labels: Labels;
  /** Cumulative counts, one per upper bound in the family's `buckets`. */
  cumulative: number[];
  sum: number;
  count: number;
}

export type MetricFamily =
  | { name: string; help: string; type: 'counter' | 'gauge'; samples: Sample[] }
  | { name: string; help: string; type: 'histogram'; buckets: number[]; series: HistogramSeries[] };

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function escapeHelp(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabelValue(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function formatLabels(labels: Labels, extra?: [string, string]): string {
  const pairs = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  if (extra) pairs.push(extra);
  if (pairs.length === 0) return '';
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

export function formatFamilies(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    if (f.type === 'histogram') {
      for (const s of f.series) {
        f.buckets.forEach((le, i) =>
          lines.push(
            `${f.name}_bucket${formatLabels(s.labels, ['le', formatValue(le)])} ${formatValue(s.cumulative[i] ?? 0)}`,
          ),
        );
        lines.push(`${f.name}_bucket${formatLabels(s.labels, ['le', '+Inf'])} ${formatValue(s.count)}`);
        lines.push(`${f.name}_sum${formatLabels(s.labels)} ${formatValue(s.sum)}`);
        lines.push(`${f.name}_count${formatLabels(s.labels)} ${formatValue(s.count)}`);
      }
    } else {
      for (const s of f.samples) lines.push(`${f.name}${formatLabels(s.labels)} ${formatValue(s.value)}`);
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

function checkNames(name: string, labelNames: readonly string[]): void {
  if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name "${name}"`);
  for (const l of labelNames) {
    if (!LABEL_NAME.test(l) || l === 'le' || l.startsWith('__'))
      throw new Error(`invalid label name "${l}" on metric ${name}`);
  }
}

function seriesKey(labelNames: readonly string[], labels: Labels): string {
  const missing = labelNames.filter((l) => labels[l] === undefined);
  const unknown = Object.keys(labels).filter((l) => !labelNames.includes(l));
  if (missing.length || unknown.length)
    throw new Error(`labels ${JSON.stringify(labels)} do not match [${labelNames.join(', ')}]`);
  return JSON.stringify(labelNames.map((l) => labels[l]));
}

/** A monotonically increasing count per label set. */
export class Counter {
  private readonly values = new Map<string, Sample>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
  ) {
    checkNames(name, labelNames);
  }
  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new Error(`counter ${this.name} cannot decrease`);
    const key = seriesKey(this.labelNames, labels);
    const s = this.values.get(key) ?? { labels: { ...labels }, value: 0 };
    s.value += by;
    this.values.set(key, s);
  }
  get(labels: Labels = {}): number {
    return this.values.get(seriesKey(this.labelNames, labels))?.value ?? 0;
  }
  collect(): MetricFamily {
    return { name: this.name, help: this.help, type: 'counter', samples: [...this.values.values()] };
  }
}

/** Observations sorted into fixed upper bounds, with their sum and count. */
export class Histogram {
  private readonly series = new Map<string, HistogramSeries>();
  readonly buckets: number[];
  constructor(
    readonly name: string,
    readonly help: string,
    buckets: readonly number[],
    readonly labelNames: readonly string[] = [],
  ) {
    checkNames(name, labelNames);
    this.buckets = [...buckets].sort((a, b) => a - b);
    if (this.buckets.some((b, i) => !Number.isFinite(b) || this.buckets[i - 1] === b))
      throw new Error(`histogram ${name}: buckets must be finite and distinct`);
  }
  observe(labels: Labels, value: number): void {
    const key = seriesKey(this.labelNames, labels);
    const s = this.series.get(key) ?? {
      labels: { ...labels },
      cumulative: this.buckets.map(() => 0),
      sum: 0,
      count: 0,
    };
    this.buckets.forEach((le, i) => {
      if (value <= le) s.cumulative[i] = (s.cumulative[i] ?? 0) + 1;
    });
    s.sum += value;
    s.count += 1;
    this.series.set(key, s);
  }
  collect(): MetricFamily {
    return {
      name: this.name,
      help: this.help,
      type: 'histogram',
      buckets: this.buckets,
      series: [...this.series.values()],
    };
  }
}
