import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { configFromEnv } from '../worker/config';
import { PROGRAMS } from './project-image';
import { CHART_DIR, MANIFEST_FILE, helmTemplate, renderManifest, sourceCrdFiles } from './render-chart';
import { repoRoot } from './stack-info';

const root = repoRoot();

interface K8sDoc {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
  spec?: Record<string, unknown>;
}
const docs = (text: string): K8sDoc[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as K8sDoc | null)
    .filter((d): d is K8sDoc => d !== null);

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
}
interface Container {
  command?: string[];
  env: EnvVar[];
  securityContext: Record<string, unknown>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
function operatorContainer(set: string[] = []): Container {
  const d = docs(helmTemplate(root, { set, showOnly: ['templates/deployment.yaml'] }))[0];
  const pod = (d?.spec?.template as { spec: { containers: Container[] } }).spec;
  const c = pod.containers[0];
  if (!c) throw new Error('the Deployment has no container');
  return c;
}
/**
 * The env the chart gives the operator, as the process would see it (Secret references stand in as
 * `secret:<name>/<key>`, downward-API fields as `field:<path>`).
 */
function chartEnv(c: Container): NodeJS.ProcessEnv {
  return Object.fromEntries(
    c.env.map((e) => {
      const from = e.valueFrom;
      const ref = from?.fieldRef
        ? `field:${from.fieldRef.fieldPath}`
        : `secret:${from?.secretKeyRef?.name}/${from?.secretKeyRef?.key}`;
      return [e.name, e.value ?? ref];
    }),
  );
}

describe('generated files under deploy/', () => {
  it('the chart carries exactly the CRDs of crds/, byte for byte (run `npm run chart` after changing one)', () => {
    const chartCrds = readdirSync(join(root, CHART_DIR, 'crds')).sort();
    expect(chartCrds).toEqual(sourceCrdFiles(root));
    for (const f of chartCrds) {
      expect(readFileSync(join(root, CHART_DIR, 'crds', f), 'utf8')).toBe(
        readFileSync(join(root, 'crds', f), 'utf8'),
      );
    }
  });
  it('deploy/etcd-conductor.yaml is the current rendering of the chart (run `npm run chart` after changing it)', () => {
    expect(readFileSync(join(root, MANIFEST_FILE), 'utf8')).toBe(renderManifest(root));
  });
  it('the plain manifest creates its namespace first and then the CRDs', () => {
    const kinds = docs(readFileSync(join(root, MANIFEST_FILE), 'utf8')).map((d) => d.kind);
    expect(kinds.slice(0, 2)).toEqual(['Namespace', 'CustomResourceDefinition']);
    expect(kinds).toEqual(expect.arrayContaining(['Deployment', 'PodDisruptionBudget', 'ServiceAccount']));
  });
});

describe('values.schema.json', () => {
  const wrong: Array<[string, string, RegExp]> = [
    ['a replica count given as a word', 'replicaCount=two', /replicaCount.*want integer/],
    ['an RBAC scope that is neither cluster nor namespace', 'rbac.scope=galaxy', /rbac\/scope.*one of/],
    ['a Temporal address without a port', 'temporal.address=temporal.example', /temporal\/address/],
    ['a log level the operator does not know', 'logLevel=loud', /logLevel/],
    ['a misspelt value', 'temporal.tsl.enabled=true', /additional properties 'tsl' not allowed/],
  ];
  it.each(wrong)('rejects %s with a schema error', (_name, set, message) => {
    expect(() => helmTemplate(root, { set: [set] })).toThrow(message);
  });
});

describe('RBAC', () => {
  const rbacKinds = (scope: string) =>
    docs(helmTemplate(root, { set: [`rbac.scope=${scope}`], showOnly: ['templates/rbac.yaml'] })).map(
      (d) => `${d.kind} ${d.metadata.namespace ?? '(cluster)'}`,
    );
  // Both scopes add the watcher Lease's Role and RoleBinding in the release namespace.
  const lease = ['Role etcd-conductor', 'RoleBinding etcd-conductor'];
  // Both scopes also bind the cluster-scoped reads (StorageClasses), which no Role can grant.
  const clusterRead = ['ClusterRole (cluster)', 'ClusterRoleBinding (cluster)'];
  it('cluster scope grants through a ClusterRole bound cluster-wide', () => {
    expect(rbacKinds('cluster').sort()).toEqual(
      ['ClusterRole (cluster)', 'ClusterRoleBinding (cluster)', ...clusterRead, ...lease].sort(),
    );
  });
  it('namespace scope grants only in the release namespace and makes the operator watch only there', () => {
    expect(rbacKinds('namespace').sort()).toEqual(
      ['Role etcd-conductor', 'RoleBinding etcd-conductor', ...clusterRead, ...lease].sort(),
    );
    expect(chartEnv(operatorContainer(['rbac.scope=namespace'])).WATCH_NAMESPACE).toBe('etcd-conductor');
  });
  it('has no wildcard, no escalate/bind/impersonate, no pods/exec, and never lists or watches Secrets (get, plus create/patch of its own applied-password copies)', () => {
    const rules = docs(helmTemplate(root, { showOnly: ['templates/rbac.yaml'] })).flatMap(
      (d) => d.rules ?? [],
    );
    expect(rules.length).toBeGreaterThan(0);
    for (const r of rules) {
      expect([...r.apiGroups, ...r.resources, ...r.verbs]).not.toContain('*');
      expect(r.verbs).not.toEqual(expect.arrayContaining(['escalate']));
      expect(r.verbs.filter((v) => ['escalate', 'bind', 'impersonate'].includes(v))).toEqual([]);
      expect(r.resources).not.toContain('pods/exec');
      if (r.resources.includes('secrets')) expect(r.verbs).toEqual(['create', 'get', 'patch']);
    }
  });
});

describe('the operator Deployment', () => {
  it('runs restricted: non-root, read-only root filesystem, no capabilities, RuntimeDefault seccomp', () => {
    expect(operatorContainer().securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });
  it('gives the operator settings that worker/config.ts reads back as the chart values', () => {
    const config = configFromEnv(
      chartEnv(
        operatorContainer([
          'temporal.address=t.example:7233',
          'temporal.namespace=prod',
          'temporal.taskQueue=q1',
          'logLevel=debug',
          'roles={worker}',
        ]),
      ),
    );
    expect(config).toMatchObject({
      roles: ['worker'],
      logLevel: 'debug',
      temporalAddress: 't.example:7233',
      temporalNamespace: 'prod',
      taskQueue: 'q1',
      httpAddress: '0.0.0.0:9464',
      // The watcher Lease: in the Pod's namespace, held under the Pod's name (downward API).
      operatorNamespace: 'field:metadata.namespace',
      identity: 'field:metadata.name',
    });
    expect(config.temporalTls).toBeUndefined();
  });
  it("runs the image's operator program and can bind the Pod's own address instead of every address", () => {
    const c = operatorContainer(['http.host=$(POD_IP)']);
    expect(c.command).toEqual(['etcd-conductor-operator']);
    expect(Object.keys(PROGRAMS)).toContain('etcd-conductor-operator');
    const env = chartEnv(c);
    expect(env['POD_IP']).toBe('field:status.podIP');
    // The kubelet expands $(POD_IP) because POD_IP is defined before it.
    expect(c.env.findIndex((e) => e.name === 'POD_IP')).toBeLessThan(
      c.env.findIndex((e) => e.name === 'OPERATOR_HTTP_ADDRESS'),
    );
    expect(env['OPERATOR_HTTP_ADDRESS']).toBe('$(POD_IP):9464');
  });
  it('mounts an mTLS client certificate Secret and points the operator at its files', () => {
    const c = operatorContainer([
      'temporal.tls.clientCertSecret=temporal-client',
      'temporal.tls.caKey=ca.crt',
      'temporal.tls.serverName=frontend.example',
    ]);
    const dir = c.volumeMounts?.find((m) => m.name === 'temporal-tls')?.mountPath;
    expect(configFromEnv(chartEnv(c)).temporalTls).toEqual({
      clientCertFile: `${dir}/tls.crt`,
      clientKeyFile: `${dir}/tls.key`,
      caFile: `${dir}/ca.crt`,
      serverName: 'frontend.example',
    });
  });
  it('passes a Temporal Cloud API key from its Secret and turns TLS on', () => {
    const config = configFromEnv(
      chartEnv(
        operatorContainer(['temporal.apiKey.secretName=temporal-cloud', 'temporal.apiKey.secretKey=key']),
      ),
    );
    expect(config.temporalApiKey).toBe('secret:temporal-cloud/key');
    expect(config.temporalTls).toEqual({});
  });
});
