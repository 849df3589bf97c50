// The Grafana dashboard in deploy/monitoring/ has one panel per alert rule of the chart's PrometheusRule, with the
// rule's own expression (so the panel shows exactly what fires), and every operator metric it charts is one the
// operator exports.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { renderMonitoring } from '../localcluster/render-chart';
import { repoRoot } from '../localcluster/stack-info';
import { createOperatorMetrics } from './operator-metrics';

const root = repoRoot();

interface Panel {
  type: string;
  id: number;
  title: string;
  description?: string;
  datasource?: { uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
}
const dashboard = JSON.parse(
  readFileSync(join(root, 'deploy', 'monitoring', 'etcd-conductor-dashboard.json'), 'utf8'),
) as { uid: string; title: string; panels: Panel[]; templating: { list: { name: string }[] } };
const charts = dashboard.panels.filter((p) => p.type !== 'row');

const rules = parseAllDocuments(renderMonitoring(root))
  .map(
    (d) =>
      d.toJS() as {
        kind?: string;
        spec?: { groups?: { rules: { alert: string; expr: string }[] }[] };
      } | null,
  )
  .filter((d) => d?.kind === 'PrometheusRule')
  .flatMap((d) => d?.spec?.groups ?? [])
  .flatMap((g) => g.rules);

test('the rules are there to check against', () => {
  expect(rules.length).toBeGreaterThanOrEqual(4);
});

test.each(rules.map((r) => [r.alert, r.expr] as const))(
  '%s has its panel, charting the rule itself',
  (alert, expr) => {
    const panels = charts.filter((p) => p.title === alert);
    expect(panels).toHaveLength(1);
    expect(panels[0]?.targets?.[0]?.expr.trim()).toBe(expr.trim());
  },
);

test('every operator metric the dashboard charts is one the operator exports', async () => {
  const exported = new Set<string>();
  for (const line of (await createOperatorMetrics().render()).split('\n')) {
    const m = /^# TYPE (\S+) (\w+)$/.exec(line);
    if (!m?.[1]) continue;
    exported.add(m[1]);
    if (m[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) exported.add(`${m[1]}${s}`);
  }
  const used = charts.flatMap((p) =>
    (p.targets ?? []).flatMap(
      (t) => t.expr.match(/\b(?:etcd_conductor_|process_|nodejs_)[a-z0-9_]+\b/g) ?? [],
    ),
  );
  expect(used.length).toBeGreaterThan(10);
  expect([...new Set(used)].filter((n) => !exported.has(n))).toEqual([]);
});

test('panels have unique ids, a description, and query the chosen data source', () => {
  expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
  for (const p of charts) {
    expect(p.description?.length).toBeGreaterThan(10);
    expect(p.datasource?.uid).toBe('${datasource}');
    for (const t of p.targets ?? []) expect(t.datasource?.uid).toBe('${datasource}');
  }
  expect(dashboard.templating.list.map((v) => v.name)).toEqual(['datasource', 'namespace', 'cluster']);
});
