import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { OPERATOR_OWNED_FLAGS } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import type { MemberPodInput } from './member-manifests';
import { memberFromPeerURL, memberPeerURL, PORTS } from '../crds/names';
import {
  clusterToken,
  disruptionBudget,
  ETCD_DATA_DIR,
  etcdArgs,
  initialCluster,
  initialMembersOfAnnotation,
  memberClaim,
  memberPod,
} from './member-manifests';

const ref = { namespace: 'prod', name: 'main', uid: 'uid-1' };

function specOf(more: Partial<EtcdClusterSpec> = {}): EtcdClusterSpec {
  return {
    replicas: 3,
    version: '3.6.16',
    storage: { size: '1Gi', medium: '' },
    progressDeadlineSeconds: 600,
    ...more,
  };
}

function podInput(more: Partial<MemberPodInput> = {}): MemberPodInput {
  return {
    ref,
    spec: specOf(),
    member: 'main-1',
    role: 'voter',
    image: 'quay.io/coreos/etcd:v3.6.16',
    initialClusterState: 'existing',
    initialCluster: `main-0=${memberPeerURL(ref, 'main-0')},main-1=${memberPeerURL(ref, 'main-1')}`,
    ...more,
  };
}

const flagName = (arg: string) => /^--([^=]+)=/.exec(arg)?.[1];

describe('etcdArgs', () => {
  const owned = [
    'name',
    'data-dir',
    'listen-peer-urls',
    'listen-client-urls',
    'listen-metrics-urls',
    'advertise-client-urls',
    'initial-advertise-peer-urls',
    'initial-cluster',
    'initial-cluster-state',
    'initial-cluster-token',
  ];

  it.each([
    ['no options: only the operator flags', undefined, []],
    [
      'options come first, sorted by name',
      { 'snapshot-count': '5000', 'auto-compaction-mode': 'periodic' },
      ['--auto-compaction-mode=periodic', '--snapshot-count=5000'],
    ],
    [
      'an option naming an owned flag is dropped, the rest kept',
      { name: 'evil', 'initial-cluster-state': 'new', 'quota-backend-bytes': '1' },
      ['--quota-backend-bytes=1'],
    ],
  ])('%s', (_case, options, extra) => {
    const args = etcdArgs(podInput({ spec: specOf(options ? { options } : {}) }));
    expect(args.slice(0, extra.length)).toEqual(extra);
    expect(args.slice(extra.length).map(flagName)).toEqual(owned);
  });

  it('sets every owned flag exactly once, from the member and cluster identity', () => {
    const args = etcdArgs(
      podInput({ spec: specOf({ options: Object.fromEntries(owned.map((f) => [f, 'x'])) }) }),
    );
    const names = args.map(flagName);
    expect(new Set(names).size).toBe(names.length);
    expect(args).toEqual(
      expect.arrayContaining([
        '--name=main-1',
        '--initial-cluster-state=existing',
        `--initial-advertise-peer-urls=${memberPeerURL(ref, 'main-1')}`,
        '--advertise-client-urls=http://main-1.main-peer.prod.svc:2379',
        '--initial-cluster-token=prod/main/uid-1',
      ]),
    );
    expect(args).not.toContain('--name=x');
  });

  it('passes no operator-owned flag from options, even one the operator does not set itself', () => {
    const options = {
      ...Object.fromEntries(OPERATOR_OWNED_FLAGS.map((f) => [f, 'user'])),
      'log-level': 'warn',
    };
    const args = etcdArgs(podInput({ spec: specOf({ options }) }));
    expect(args.filter((a) => a.endsWith('=user'))).toEqual([]);
    expect(args).not.toContain('--force-new-cluster=user');
    expect(args[0]).toBe('--log-level=warn');
  });
});

describe('memberPod', () => {
  const container = (pod: ReturnType<typeof memberPod>) => pod.spec.containers[0]!;

  it("pulls with the spec's pull Secrets, and names none when there are none", () => {
    expect(
      memberPod(podInput({ spec: specOf({ imagePullSecrets: [{ name: 'mirror' }] }) })).spec.imagePullSecrets,
    ).toEqual([{ name: 'mirror' }]);
    expect(memberPod(podInput()).spec).not.toHaveProperty('imagePullSecrets');
  });

  it("carries the cluster label and serves etcd's metrics on the port named metrics (what the chart's etcd PodMonitor scrapes)", () => {
    const pod = memberPod(podInput());
    expect(pod.metadata.labels).toHaveProperty([Labels.cluster]);
    expect(container(pod).ports).toContainEqual({ name: 'metrics', containerPort: PORTS.metrics });
    expect(etcdArgs(podInput())).toContain(`--listen-metrics-urls=http://$(POD_IP):${PORTS.metrics}`);
  });

  it('passes the restricted Pod Security Standard and mounts no service account token', () => {
    const pod = memberPod(podInput());
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.spec.securityContext.runAsUser).toBeGreaterThan(0);
    expect(container(pod).securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('probes liveness on /livez and readiness on /readyz, both on the plaintext metrics port', () => {
    const c = container(memberPod(podInput()));
    expect(c.livenessProbe.httpGet).toEqual({ path: '/livez', port: 2381 });
    expect(c.startupProbe.httpGet).toEqual({ path: '/livez', port: 2381 });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 2381 });
    expect(c.ports).toContainEqual({ name: 'metrics', containerPort: 2381 });
  });

  it.each([
    [
      'a claim for durable storage',
      '' as const,
      { name: 'data', persistentVolumeClaim: { claimName: 'data-main-1' } },
    ],
    [
      'a Memory emptyDir sized like the claim would be',
      'Memory' as const,
      {
        name: 'data',
        emptyDir: { medium: 'Memory', sizeLimit: '2Gi' },
      },
    ],
  ])('stores data on %s', (_case, medium, volume) => {
    const pod = memberPod(podInput({ spec: specOf({ storage: { size: '2Gi', medium } }) }));
    expect(pod.spec.volumes).toEqual([volume]);
    expect(container(pod).volumeMounts).toEqual([{ name: 'data', mountPath: '/var/lib/etcd' }]);
  });

  it('prefers other nodes for members of the same cluster when spec.affinity is absent', () => {
    const pod = memberPod(podInput());
    expect(pod.spec.affinity).toEqual({
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: {
              topologyKey: 'kubernetes.io/hostname',
              labelSelector: { matchLabels: { [Labels.cluster]: 'main' } },
            },
          },
        ],
      },
    });
  });

  it('uses spec.affinity as given, with no default anti-affinity added', () => {
    const affinity = {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
    };
    expect(memberPod(podInput({ spec: specOf({ affinity }) })).spec.affinity).toEqual(affinity);
  });

  it('labels the Pod with cluster, member and role, and user labels cannot override them', () => {
    const pod = memberPod(
      podInput({ role: 'learner', spec: specOf({ podLabels: { team: 'a', [Labels.role]: 'voter' } }) }),
    );
    expect(pod.metadata.labels).toMatchObject({
      team: 'a',
      [Labels.cluster]: 'main',
      [Labels.member]: 'main-1',
      [Labels.role]: 'learner',
    });
    expect(pod.spec.hostname).toBe('main-1');
    expect(pod.spec.subdomain).toBe('main-peer');
    // Its own peer and client name answered from /etc/hosts, never from the cluster DNS's negative cache.
    expect(pod.spec.hostAliases).toEqual([{ ip: '127.0.0.1', hostnames: ['main-1.main-peer.prod.svc'] }]);
    expect(pod.metadata.ownerReferences).toEqual([
      expect.objectContaining({ uid: 'uid-1', controller: true }),
    ]);
  });
});

describe('memberPod with a restore', () => {
  const restore = {
    container: { name: 'restore', image: 'agent', args: ['restore'] },
    volumes: [{ name: 'restore-source', persistentVolumeClaim: { claimName: 'c', readOnly: true } }],
  } as unknown as NonNullable<MemberPodInput['restore']>;

  it('runs the restore init container before etcd and adds its volumes beside the data volume', () => {
    const pod = memberPod(podInput({ member: 'main-0', initialClusterState: 'new', restore }));
    expect(pod.spec.initContainers).toEqual([restore.container]);
    expect(pod.spec.volumes.map((v) => v.name)).toEqual(['data', 'restore-source']);
  });

  it('has no init container without one', () => {
    const pod = memberPod(podInput());
    expect(pod.spec).not.toHaveProperty('initContainers');
    expect(pod.spec.volumes.map((v) => v.name)).toEqual(['data']);
  });

  it('starts etcd on the same data dir and token the restore wrote', () => {
    const args = etcdArgs(podInput({ member: 'main-0' }));
    expect(args).toContain(`--data-dir=${ETCD_DATA_DIR}`);
    expect(args).toContain(`--initial-cluster-token=${clusterToken(ref)}`);
  });
});

describe('memberFromPeerURL', () => {
  it.each(['main-0', 'main-12', 'main-with-dashes-3'])('reads back the member name of %s', (member) => {
    expect(memberFromPeerURL(ref, memberPeerURL(ref, member))).toBe(member);
  });

  it.each([
    ['another cluster', 'http://main-0.other-peer.prod.svc:2380'],
    ['another namespace', 'http://main-0.main-peer.dev.svc:2380'],
    ['the client port', 'http://main-0.main-peer.prod.svc:2379'],
    ['an IP address', 'http://10.0.0.1:2380'],
    ['a path', 'http://main-0.main-peer.prod.svc:2380/x'],
    ['an empty string', ''],
  ])('answers undefined for %s', (_case, url) => {
    expect(memberFromPeerURL(ref, url)).toBeUndefined();
  });

  it('accepts https and a trailing slash', () => {
    expect(memberFromPeerURL(ref, 'https://main-4.main-peer.prod.svc:2380/')).toBe('main-4');
  });
});

describe('initialCluster', () => {
  const m = (name: string) => ({ name, peerURL: memberPeerURL(ref, name) });

  it('is the same whatever order etcd lists the members in', () => {
    const a = initialCluster([m('main-2'), m('main-0'), m('main-1')]);
    const b = initialCluster([m('main-1'), m('main-2'), m('main-0')]);
    expect(a).toBe(b);
    expect(a).toBe(['main-0', 'main-1', 'main-2'].map((n) => `${n}=${memberPeerURL(ref, n)}`).join(','));
  });

  it('is empty for no members', () => {
    expect(initialCluster([])).toBe('');
  });
});

describe('disruptionBudget', () => {
  it.each([
    [0, 1],
    [1, 1],
    [2, 2],
    [3, 2],
    [4, 3],
    [5, 3],
    [9, 5],
  ])('with %i voters keeps minAvailable %i (the quorum)', (voters, minAvailable) => {
    const pdb = disruptionBudget(ref, voters);
    expect(pdb.spec.minAvailable).toBe(minAvailable);
    expect(pdb.spec.selector.matchLabels).toEqual({ [Labels.cluster]: 'main', [Labels.role]: 'voter' });
  });
});

describe('a Pod started with --force-new-cluster (recovery from a permanent quorum loss)', () => {
  test('has the flag last and says so in an annotation', () => {
    const pod = memberPod(podInput({ forceNewCluster: true }));
    const args = pod.spec.containers[0]?.args ?? [];
    expect(args.at(-1)).toBe('--force-new-cluster=true');
    expect(pod.metadata.annotations['etcd.conductor.dev/force-new-cluster']).toBe('true');
  });

  test('an ordinary Pod has neither, and spec.options cannot ask for the flag', () => {
    const pod = memberPod(podInput({ spec: specOf({ options: { 'force-new-cluster': 'true' } }) }));
    const args = pod.spec.containers[0]?.args ?? [];
    expect(args.filter((a) => a.startsWith('--force-new-cluster'))).toEqual([]);
    expect(pod.metadata.annotations['etcd.conductor.dev/force-new-cluster']).toBeUndefined();
  });
});

describe('the initial members of a brand-new cluster started together', () => {
  const initialMembers = ['main-0', 'main-1', 'main-2'];

  test('are written on the Pod and the claim, and read back from the annotation', () => {
    const pod = memberPod(podInput({ initialClusterState: 'new', initialMembers }));
    expect(pod.metadata.annotations['etcd.conductor.dev/initial-members']).toBe('main-0,main-1,main-2');
    const claim = memberClaim({ ref, spec: specOf(), member: 'main-1', initialMembers });
    expect(claim.metadata.annotations?.['etcd.conductor.dev/initial-members']).toBe('main-0,main-1,main-2');
    expect(initialMembersOfAnnotation('main-0,main-1,main-2')).toEqual(initialMembers);
    expect(initialMembersOfAnnotation('')).toBeUndefined();
    expect(initialMembersOfAnnotation(undefined)).toBeUndefined();
  });

  test('are on no Pod or claim of a seed started alone or a joiner', () => {
    expect(memberPod(podInput()).metadata.annotations['etcd.conductor.dev/initial-members']).toBeUndefined();
    expect(memberClaim({ ref, spec: specOf(), member: 'main-1' }).metadata.annotations).toBeUndefined();
  });
});
