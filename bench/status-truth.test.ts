import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster, MemberStatus } from '../crds/etcd-cluster';
import { frozenFor, podsNotReady, statusTells } from './status-truth';

const member = (name: string, extra: Partial<MemberStatus> = {}): MemberStatus => ({
  id: name,
  name,
  role: 'voter',
  ready: true,
  leader: false,
  ...extra,
});
const cluster = (members: MemberStatus[], available: { status: 'True' | 'False'; reason: string }) =>
  ({
    status: {
      members,
      conditions: [{ type: 'Available', ...available, message: '', lastTransitionTime: '' }],
    },
  }) as unknown as EtcdCluster;
const healthy = { status: 'True' as const, reason: 'QuorumHealthy' };

describe('frozenFor', () => {
  const c = cluster([member('t-0'), member('t-1', { leader: true }), member('t-2')], healthy);
  test.each([
    ['follower', ['t-0']],
    ['leader', ['t-1']],
    ['twoOfThree', ['t-1', 't-0']],
  ] as const)('%s -> %o', (scenario, frozen) => {
    expect(frozenFor(scenario, c)).toEqual(frozen);
  });
});

describe('statusTells', () => {
  test.each([
    ['follower: still ready', 'follower', cluster([member('t-0'), member('t-1')], healthy), false],
    [
      'follower: not ready',
      'follower',
      cluster([member('t-0', { ready: false }), member('t-1')], healthy),
      true,
    ],
    ['follower: gone from the list', 'follower', cluster([member('t-1')], healthy), false],
    [
      'two of three: Available False QuorumLost',
      'twoOfThree',
      cluster([], { status: 'False', reason: 'QuorumLost' }),
      true,
    ],
    [
      'two of three: Available False for another reason',
      'twoOfThree',
      cluster([], { status: 'False', reason: 'Bootstrapping' }),
      false,
    ],
    [
      'two of three: members not ready is not enough',
      'twoOfThree',
      cluster([member('t-0', { ready: false })], healthy),
      false,
    ],
  ] as const)('%s', (_what, scenario, c, told) => {
    expect(statusTells(scenario, c, ['t-0'])).toBe(told);
  });
});

describe('podsNotReady', () => {
  const pod = (name: string, ready: 'True' | 'False' | undefined): V1Pod => ({
    metadata: { name },
    status: ready ? { conditions: [{ type: 'Ready', status: ready }] } : {},
  });
  test.each([
    ['every frozen Pod not Ready', [pod('t-0', 'False'), pod('t-1', 'False'), pod('t-2', 'True')], true],
    ['one still Ready', [pod('t-0', 'False'), pod('t-1', 'True')], false],
    ['no condition yet', [pod('t-0', 'False'), pod('t-1', undefined)], false],
    ['a Pod missing', [pod('t-0', 'False')], false],
  ])('%s', (_what, pods, notReady) => {
    expect(podsNotReady(pods, ['t-0', 't-1'])).toBe(notReady);
  });
});
