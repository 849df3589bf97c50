// Table tests of the alarm poller's decisions: which clusters it asks, how alarm lists compare, and when it signals.
import type { EtcdCluster } from '../crds/etcd-cluster';
import {
  alarmSetKey,
  alarmSignalNeeded,
  outageSignalNeeded,
  alarmTargets,
  referencedSecrets,
  secretsSignalNeeded,
  secretVersionsKey,
} from './alarm-poller';

const cluster = (
  namespace: string,
  name: string,
  more: { replicas?: number; deleting?: boolean; tls?: boolean } = {},
): Pick<EtcdCluster, 'metadata' | 'spec'> => ({
  metadata: {
    namespace,
    name,
    ...(more.deleting ? { deletionTimestamp: '2026-11-21T00:00:00Z' } : {}),
  },
  spec: {
    replicas: more.replicas ?? 3,
    version: '3.6.16',
    storage: { size: '1Gi' },
    progressDeadlineSeconds: 600,
    ...(more.tls ? { tls: { client: { secretName: 'client-tls', operatorSecretName: 'op-tls' } } } : {}),
  } as EtcdCluster['spec'],
});

describe('alarmTargets', () => {
  test.each<[string, Pick<EtcdCluster, 'metadata' | 'spec'>[], string[], string[]]>([
    [
      'a running cluster is asked through its client Service',
      [cluster('a', 'main')],
      [],
      ['http://main-client.a.svc:2379'],
    ],
    [
      'a cluster with client TLS is asked over https',
      [cluster('a', 'secure', { tls: true })],
      [],
      ['https://secure-client.a.svc:2379'],
    ],
    [
      'a paused cluster (replicas 0) has no member to answer',
      [cluster('a', 'paused', { replicas: 0 })],
      [],
      [],
    ],
    ['a cluster being deleted is not asked', [cluster('a', 'gone', { deleting: true })], [], []],
    ['an excluded namespace is left to the other installation', [cluster('other', 'main')], ['other'], []],
    [
      'clusters are asked in a stable order',
      [cluster('b', 'x'), cluster('a', 'y')],
      [],
      ['http://y-client.a.svc:2379', 'http://x-client.b.svc:2379'],
    ],
  ])('%s', (_name, clusters, exclude, endpoints) => {
    expect(alarmTargets(clusters, exclude).map((t) => t.endpoint)).toEqual(endpoints);
  });
});

describe('alarmSetKey', () => {
  test.each<[string, { memberId: string; alarm: string }[], string]>([
    ['no alarm is the empty key', [], ''],
    ['one alarm names its kind and member', [{ memberId: '101', alarm: 'NOSPACE' }], 'NOSPACE@101'],
    [
      'order does not matter',
      [
        { memberId: '102', alarm: 'NOSPACE' },
        { memberId: '101', alarm: 'NOSPACE' },
      ],
      'NOSPACE@101,NOSPACE@102',
    ],
    [
      'a repeated row counts once',
      [
        { memberId: '101', alarm: 'CORRUPT' },
        { memberId: '101', alarm: 'CORRUPT' },
      ],
      'CORRUPT@101',
    ],
  ])('%s', (_name, rows, key) => {
    expect(alarmSetKey(rows)).toBe(key);
  });
});

describe('outageSignalNeeded', () => {
  test.each([
    {
      case: 'a cluster that answered before: its first round without an answer is told',
      bootstrapped: true,
      rounds: 1,
      want: true,
    },
    {
      case: 'and the second (the worker may have used cached credentials on the first look)',
      bootstrapped: true,
      rounds: 2,
      want: true,
    },
    { case: 'a longer outage costs nothing more', bootstrapped: true, rounds: 3, want: false },
    {
      case: 'a cluster that never answered (no image for its version, bootstrapping) is not told',
      bootstrapped: false,
      rounds: 1,
      want: false,
    },
  ])('$case', ({ bootstrapped, rounds, want }) => {
    expect(outageSignalNeeded(bootstrapped, rounds)).toBe(want);
  });
});

describe('alarmSignalNeeded', () => {
  test.each<[string, string | undefined, string, boolean]>([
    [
      'a healthy cluster never signalled sends nothing (an idle fleet costs no Temporal action)',
      undefined,
      '',
      false,
    ],
    ['a healthy cluster told nothing before stays quiet', '', '', false],
    ['a NOSPACE raised on a cluster never signalled is told at once', undefined, 'NOSPACE@101', true],
    ['a newly raised NOSPACE is told', '', 'NOSPACE@101', true],
    ['the same raised alarm is told only once', 'NOSPACE@101', 'NOSPACE@101', false],
    ['another member raising NOSPACE is a change', 'NOSPACE@101', 'NOSPACE@101,NOSPACE@102', true],
    ['a cleared alarm is told so status stops showing it', 'NOSPACE@101', '', true],
    ['a CORRUPT alarm is told like any other', '', 'CORRUPT@102', true],
  ])('%s', (_name, last, now, signal) => {
    expect(alarmSignalNeeded(last, now)).toBe(signal);
  });
});

describe('referencedSecrets', () => {
  type Spec = Parameters<typeof referencedSecrets>[0];
  test.each<[string, Spec, string[]]>([
    ['no auth, no TLS: nothing to compare', {}, []],
    ['auth: the root password Secret', { auth: { rootSecretRef: { name: 'root' } } }, ['root']],
    [
      'TLS from Secrets and auth, sorted, each once',
      {
        auth: { rootSecretRef: { name: 'shared' } },
        tls: {
          peer: { secretName: 'shared' },
          client: { secretName: 'server-tls', operatorSecretName: 'op-tls' },
        },
      },
      ['op-tls', 'server-tls', 'shared'],
    ],
    [
      "TLS from an issuer: the Secrets cert-manager fills (a renewal shows there) and the operator's copies of them",
      { tls: { peer: { issuerRef: { name: 'ca' } }, client: { issuerRef: { name: 'ca' } } } } as Spec,
      [
        'main-operator-tls',
        'main-operator-tls-applied',
        'main-peer-tls',
        'main-peer-tls-applied',
        'main-server-tls',
        'main-server-tls-applied',
      ],
    ],
  ])('%s', (_name, spec, want) => {
    expect(referencedSecrets(spec, 'main')).toEqual(want);
  });
});

describe('secretVersionsKey and secretsSignalNeeded', () => {
  test('a missing Secret reads as "-", so its creation is a change', () => {
    expect(
      secretVersionsKey([
        ['a', '12'],
        ['b', undefined],
      ]),
    ).toBe('a@12,b@-');
    expect(
      secretsSignalNeeded(
        'a@12,b@-',
        secretVersionsKey([
          ['a', '12'],
          ['b', '40'],
        ]),
      ),
    ).toBe(true);
  });
  test.each<[string, string | undefined, string, boolean]>([
    [
      'first sighting (a start, a new cluster) tells: a Secret edited before the first round is not missed',
      undefined,
      'a@1',
      true,
    ],
    ['the same versions: nothing to tell', 'a@1,b@7', 'a@1,b@7', false],
    ['a rotated password or a new ca.crt bumps a resourceVersion: tell', 'a@1,b@7', 'a@1,b@9', true],
    ['a Secret deleted: tell (the workflow reports it)', 'a@1', 'a@-', true],
  ])('%s', (_name, recorded, now, want) => {
    expect(secretsSignalNeeded(recorded, now)).toBe(want);
  });
});
