// The chart's RBAC on a real apiserver: what the operator's ServiceAccount may do is exactly the committed allowlist, in both scopes.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { helmPath, helmTemplate } from '../../localcluster/render-chart';
import { repoRoot } from '../../localcluster/stack-info';
import { connect, eventually, freshNamespace, type Harness } from '../support/cluster-harness';

const root = repoRoot();
const ALLOWLIST = join(root, 'deploy', 'rbac-allowlist.txt');

/** The allowlist's rows: `resource nonResourceURLs resourceNames [verbs]`, comments and blank lines dropped. */
function allowlist(): string[] {
  return readFileSync(ALLOWLIST, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/**
 * `kubectl auth can-i --list` as rows in the allowlist's form, sorted. Columns are cut at the header's
 * offsets because a non-resource row leaves the Resources column blank (written `-` in the allowlist).
 */
function canIList(h: Harness, namespace: string, user: string): string[] {
  const [header = '', ...lines] = kubectl(h, [
    'auth',
    'can-i',
    '--list',
    `--as=${user}`,
    '-n',
    namespace,
  ]).split('\n');
  const cuts = ['Non-Resource URLs', 'Resource Names', 'Verbs'].map((c) => header.indexOf(c));
  if (cuts.some((c) => c < 0)) throw new Error(`unexpected kubectl auth can-i --list header: ${header}`);
  const [urls = 0, names = 0, verbs = 0] = cuts;
  return lines
    .filter((l) => l.trim())
    .map((l) =>
      [l.slice(0, urls), l.slice(urls, names), l.slice(names, verbs), l.slice(verbs)]
        .map((col) => col.trim() || '-')
        .join(' '),
    )
    .sort();
}

/** One `kubectl auth can-i`; `pods/exec` is split into `pods --subresource=exec`, since kubectl reads `a/b` as TYPE/NAME. */
function canI(h: Harness, namespace: string, user: string, verb: string, resource: string): string {
  const [type = resource, sub] = resource.split('/');
  const res = spawnSync(
    h.stack.tools.kubectl,
    [
      '--kubeconfig',
      h.stack.kubeconfig,
      'auth',
      'can-i',
      verb,
      type,
      ...(sub ? [`--subresource=${sub}`] : []),
      `--as=${user}`,
      '-n',
      namespace,
    ],
    { encoding: 'utf8' },
  );
  return res.stdout.trim();
}

function kubectl(h: Harness, args: string[], input?: string): string {
  return execFileSync(h.stack.tools.kubectl, ['--kubeconfig', h.stack.kubeconfig, ...args], {
    encoding: 'utf8',
    ...(input ? { input } : {}),
  });
}

describe.each(['namespace', 'cluster'])('the chart RBAC with rbac.scope=%s', (scope) => {
  const h = connect();
  let ns = '';
  let rendered = '';
  let user = '';

  beforeAll(async () => {
    // Tests find helm through the stack's tool list, like kubectl; older stack.json files lack it.
    process.env.HELM_PATH = h.stack.tools.helm ?? helmPath();
    ns = await freshNamespace(h, `rbac-${scope}`);
    // The namespace name as release name keeps the ClusterRole of each run apart on a long-lived stack.
    rendered = helmTemplate(root, {
      release: ns,
      namespace: ns,
      set: [`rbac.scope=${scope}`],
      showOnly: ['templates/serviceaccount.yaml', 'templates/rbac.yaml'],
    });
    kubectl(h, ['apply', '-f', '-'], rendered);
    user = `system:serviceaccount:${ns}:${ns}-etcd-conductor`;
  });

  afterAll(() => {
    // The namespace goes with the harness; the cluster-scoped objects would outlive it.
    if (rendered) kubectl(h, ['delete', '--ignore-not-found', '-f', '-'], rendered);
  });

  it('grants in its namespace exactly the committed allowlist (deploy/rbac-allowlist.txt)', async () => {
    const expected = allowlist();
    // The authorizer learns about new bindings through its informers, a moment after the apply.
    const actual = await eventually('the ServiceAccount to hold its role', async () => {
      const rows = canIList(h, ns, user);
      return rows.some((r) => r.startsWith('pods ')) ? rows : undefined;
    });
    expect(actual).toEqual([...expected].sort());
  });

  it.each([
    ['create', 'pods/exec'],
    ['update', 'etcdclusters.etcd.conductor.dev/status'],
    ['list', 'secrets'],
    ['watch', 'secrets'],
    ['update', 'secrets'],
    ['create', 'roles.rbac.authorization.k8s.io'],
    ['escalate', 'clusterroles.rbac.authorization.k8s.io'],
    ['bind', 'clusterroles.rbac.authorization.k8s.io'],
    ['impersonate', 'serviceaccounts'],
    ['delete', 'etcdclusters.etcd.conductor.dev'],
  ])('refuses to %s %s', async (verb, resource) => {
    await eventually('the ServiceAccount to hold its role', async () =>
      canI(h, ns, user, 'create', 'pods') === 'yes' ? true : undefined,
    );
    expect(canI(h, ns, user, verb, resource)).toBe('no');
  });

  it(`${scope === 'cluster' ? 'also grants' : 'grants nothing'} in another namespace`, async () => {
    await eventually('the ServiceAccount to hold its role', async () =>
      canI(h, ns, user, 'create', 'pods') === 'yes' ? true : undefined,
    );
    expect(canI(h, 'default', user, 'create', 'pods')).toBe(scope === 'cluster' ? 'yes' : 'no');
  });
});
