import type { MetricFamily } from './prometheus-text';
import { Counter, formatFamilies, formatValue, Histogram } from './prometheus-text';

describe('formatFamilies', () => {
  const cases: Array<[string, MetricFamily[], string]> = [
    ['nothing to report prints nothing', [], ''],
    [
      'a counter without labels prints HELP, TYPE and one sample',
      [{ name: 'x_total', help: 'Things.', type: 'counter', samples: [{ labels: {}, value: 3 }] }],
      '# HELP x_total Things.\n# TYPE x_total counter\nx_total 3\n',
    ],
    [
      'a family without samples still declares itself',
      [{ name: 'g', help: 'h', type: 'gauge', samples: [] }],
      '# HELP g h\n# TYPE g gauge\n',
    ],
    [
      'labels print sorted by name',
      [{ name: 'g', help: 'h', type: 'gauge', samples: [{ labels: { b: '2', a: '1' }, value: 0.5 }] }],
      '# HELP g h\n# TYPE g gauge\ng{a="1",b="2"} 0.5\n',
    ],
    [
      'label values escape backslash, double quote and newline',
      [
        {
          name: 'g',
          help: 'h',
          type: 'gauge',
          samples: [{ labels: { v: 'a\\b"c\nd' }, value: 1 }],
        },
      ],
      '# HELP g h\n# TYPE g gauge\ng{v="a\\\\b\\"c\\nd"} 1\n',
    ],
    [
      'help escapes backslash and newline but not quotes',
      [{ name: 'g', help: 'a "q" \\ b\nc', type: 'gauge', samples: [] }],
      '# HELP g a "q" \\\\ b\\nc\n# TYPE g gauge\n',
    ],
    [
      'a histogram prints cumulative buckets, +Inf equal to count, then sum and count',
      [
        {
          name: 'd_seconds',
          help: 'Durations.',
          type: 'histogram',
          buckets: [1, 5],
          series: [{ labels: { type: 'ScaleUp' }, cumulative: [1, 2], sum: 12.5, count: 3 }],
        },
      ],
      [
        '# HELP d_seconds Durations.',
        '# TYPE d_seconds histogram',
        'd_seconds_bucket{type="ScaleUp",le="1"} 1',
        'd_seconds_bucket{type="ScaleUp",le="5"} 2',
        'd_seconds_bucket{type="ScaleUp",le="+Inf"} 3',
        'd_seconds_sum{type="ScaleUp"} 12.5',
        'd_seconds_count{type="ScaleUp"} 3',
        '',
      ].join('\n'),
    ],
  ];
  it.each(cases)('%s', (_name, families, text) => {
    expect(formatFamilies(families)).toBe(text);
  });
});

describe('formatValue', () => {
  it.each<[string, number, string]>([
    ['an integer has no decimal point', 42, '42'],
    ['a fraction prints as is', 0.25, '0.25'],
    ['not a number is NaN', NaN, 'NaN'],
    ['infinity is +Inf', Infinity, '+Inf'],
    ['negative infinity is -Inf', -Infinity, '-Inf'],
  ])('%s', (_name, v, text) => expect(formatValue(v)).toBe(text));
});

describe('Histogram', () => {
  it('puts each observation in every bucket whose bound it does not exceed, the bound itself included', () => {
    const h = new Histogram('d_seconds', 'h', [5, 1, 10], ['type']);
    for (const v of [0.5, 1, 7, 30]) h.observe({ type: 'Heal' }, v);
    expect(formatFamilies([h.collect()])).toBe(
      [
        '# HELP d_seconds h',
        '# TYPE d_seconds histogram',
        'd_seconds_bucket{type="Heal",le="1"} 2',
        'd_seconds_bucket{type="Heal",le="5"} 2',
        'd_seconds_bucket{type="Heal",le="10"} 3',
        'd_seconds_bucket{type="Heal",le="+Inf"} 4',
        'd_seconds_sum{type="Heal"} 38.5',
        'd_seconds_count{type="Heal"} 4',
        '',
      ].join('\n'),
    );
  });
  it('refuses duplicate bounds', () => {
    expect(() => new Histogram('d', 'h', [1, 1])).toThrow('buckets must be finite and distinct');
  });
});

describe('Counter', () => {
  it('adds per label set and keeps label sets apart', () => {
    const c = new Counter('ops_total', 'h', ['type', 'result']);
    c.inc({ type: 'ScaleUp', result: 'Succeeded' });
    c.inc({ type: 'ScaleUp', result: 'Succeeded' }, 2);
    c.inc({ type: 'ScaleUp', result: 'Failed' });
    expect(c.get({ type: 'ScaleUp', result: 'Succeeded' })).toBe(3);
    expect(c.get({ type: 'ScaleUp', result: 'Failed' })).toBe(1);
    expect(c.get({ type: 'Heal', result: 'Failed' })).toBe(0);
  });
  it.each<[string, () => void, string]>([
    ['a label missing from a sample is an error', () => new Counter('c', 'h', ['a']).inc({}), 'do not match'],
    ['a label not declared is an error', () => new Counter('c', 'h', []).inc({ a: '1' }), 'do not match'],
    ['a counter never decreases', () => new Counter('c', 'h').inc({}, -1), 'cannot decrease'],
    ['a metric name with a dash is refused', () => new Counter('a-b', 'h'), 'invalid metric name'],
    ['le is reserved for histogram buckets', () => new Counter('c', 'h', ['le']), 'invalid label name'],
  ])('%s', (_name, act, message) => expect(act).toThrow(message));
});
