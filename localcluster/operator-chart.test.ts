import { parseAllDocuments } from 'yaml';
import { operatorChartValues, OPERATOR_CHART_NAMESPACE, OPERATOR_CHART_RELEASE } from './operator-chart';
import { PROJECT_IMAGE } from './project-image';
import { helmTemplate } from './render-chart';
import { repoRoot } from './stack-info';

interface Deployment {
  kind: string;
  metadata: { name: string; namespace: string };
  spec: {
    replicas: number;
    template: {
      spec: { containers: Array<{ image: string; env: Array<{ name: string; value?: string }> }> };
    };
  };
}

describe('the chart as the real-node stack installs it', () => {
  const rendered = helmTemplate(repoRoot(), {
    release: OPERATOR_CHART_RELEASE,
    namespace: OPERATOR_CHART_NAMESPACE,
    set: operatorChartValues('10.30.0.1:7353', 'default', ['in-cluster']),
  });
  const deployment = parseAllDocuments(rendered)
    .map((d) => d.toJS() as Deployment | null)
    .find((o) => o?.kind === 'Deployment');

  it('runs two replicas of the image built here, named etcd-conductor in etcd-conductor', () => {
    expect(deployment?.metadata).toEqual(
      expect.objectContaining({ name: OPERATOR_CHART_RELEASE, namespace: OPERATOR_CHART_NAMESPACE }),
    );
    expect(deployment?.spec.replicas).toBe(2);
    expect(deployment?.spec.template.spec.containers[0]?.image).toBe(PROJECT_IMAGE);
  });

  it("dials Temporal at the given bridge address and namespace, and leaves the other installation's namespace alone: the only values set", () => {
    const env = deployment?.spec.template.spec.containers[0]?.env ?? [];
    expect(env.find((e) => e.name === 'TEMPORAL_ADDRESS')?.value).toBe('10.30.0.1:7353');
    expect(env.find((e) => e.name === 'TEMPORAL_NAMESPACE')?.value).toBe('default');
    expect(env.find((e) => e.name === 'EXCLUDE_NAMESPACES')?.value).toBe('in-cluster');
    expect(env.find((e) => e.name === 'WATCH_NAMESPACE')).toBeUndefined();
    expect(operatorChartValues('a:1', 'ns')).toEqual(['temporal.address=a:1', 'temporal.namespace=ns']);
    expect(operatorChartValues('a:1', 'ns', ['x', 'y'])).toEqual([
      'temporal.address=a:1',
      'temporal.namespace=ns',
      'rbac.excludeNamespaces={x,y}',
    ]);
  });
});
