// The sample alerts only use metrics the operator exports: render the chart's PrometheusRule with helm and
// compare every metric name in each expression with the names worker/operator-metrics.ts prints.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { helmTemplate, MONITORING_FILE, renderMonitoring } from '../localcluster/render-chart';
import { repoRoot } from '../localcluster/stack-info';
import { createOperatorMetrics } from './operator-metrics';
import { Labels } from '../crds/labels';

const root = repoRoot();

interface Doc {
  kind: string;
  spec: {
    groups?: { rules: { alert: string; expr: string; labels: { severity: string } }[] }[];
    podMetricsEndpoints?: { port: string; path: string }[];
    selector?: { matchLabels: Record<string, string> };
  };
}
const docs = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);

/** Every series name the operator can print, histogram suffixes included. */
async function exportedNames(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const line of (await createOperatorMetrics().render()).split('\n')) {
    const m = /^# TYPE (\S+) (\w+)$/.exec(line);
    if (!m?.[1]) continue;
    names.add(m[1]);
    if (m[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${m[1]}${s}`);
  }
  return names;
}

const rendered = docs(renderMonitoring(root));
const rules = rendered.flatMap((d) => d.spec.groups ?? []).flatMap((g) => g.rules);

describe('the sample PrometheusRule', () => {
  it('has the five alerts: quorum at risk, member down, operation stuck, snapshot too old, verified backup too old', () => {
    expect(rules.map((r) => r.alert)).toEqual([
      'EtcdClusterQuorumAtRisk',
      'EtcdClusterMemberDown',
      'EtcdClusterOperationStuck',
      'EtcdClusterSnapshotTooOld',
      'EtcdClusterVerifiedBackupTooOld',
    ]);
  });

  let exported = new Set<string>();
  beforeAll(async () => {
    exported = await exportedNames();
  });
  it.each(rules.map((r) => [r.alert, r.expr] as const))(
    '%s names only metrics the operator exports',
    (_alert, expr) => {
      const used = expr.match(/\b(?:etcd_conductor_|process_)[a-z_]+\b/g) ?? [];
      expect(used.length).toBeGreaterThan(0);
      for (const name of used) expect([...exported]).toContain(name);
    },
  );

  it('the snapshot age threshold comes from values, in seconds', () => {
    const text = helmTemplate(root, {
      set: ['monitoring.prometheusRule.enabled=true', 'monitoring.prometheusRule.snapshotMaxAgeHours=2'],
      showOnly: ['templates/prometheusrule.yaml'],
    });
    const expr = docs(text)[0]?.spec.groups?.[0]?.rules.find(
      (r) => r.alert === 'EtcdClusterSnapshotTooOld',
    )?.expr;
    expect(expr).toContain('> 7200');
  });
});

describe('the sample PodMonitor', () => {
  it('scrapes /metrics on the operator container port named http, selecting the Deployment Pods', () => {
    const pm = rendered.find((d) => d.kind === 'PodMonitor');
    expect(pm?.spec.podMetricsEndpoints).toEqual([
      expect.objectContaining({ port: 'http', path: '/metrics' }),
    ]);
    expect(pm?.spec.selector?.matchLabels).toEqual({
      'app.kubernetes.io/name': 'etcd-conductor',
      'app.kubernetes.io/instance': 'etcd-conductor',
    });
  });
});

describe('the etcd members PodMonitor', () => {
  it('scrapes the port named metrics of every Pod carrying the cluster label, in every namespace', () => {
    const pm = rendered.find((d) => d.kind === 'PodMonitor' && JSON.stringify(d).includes('etcd-members')) as
      | (Doc & { spec: { namespaceSelector?: unknown; selector?: { matchExpressions?: unknown } } })
      | undefined;
    expect(pm?.spec.namespaceSelector).toEqual({ any: true });
    expect(pm?.spec.selector?.matchExpressions).toEqual([{ key: Labels.cluster, operator: 'Exists' }]);
    expect(pm?.spec.podMetricsEndpoints).toEqual([
      expect.objectContaining({ port: 'metrics', path: '/metrics' }),
    ]);
  });
});

describe('monitoring is off by default', () => {
  it('renders no PodMonitor or PrometheusRule without values', () => {
    expect(docs(helmTemplate(root)).map((d) => d.kind)).not.toEqual(expect.arrayContaining(['PodMonitor']));
    expect(docs(helmTemplate(root)).map((d) => d.kind)).not.toContain('PrometheusRule');
  });
  it(`${MONITORING_FILE} is the current rendering (run \`npm run chart\` after changing the chart)`, () => {
    expect(readFileSync(join(root, MONITORING_FILE), 'utf8')).toBe(renderMonitoring(root));
  });
});
