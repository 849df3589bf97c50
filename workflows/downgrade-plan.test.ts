// The downgrade gate as a table: enable first, wait for etcd's cluster and storage versions, then let the roll go on, and wait for etcd to finish.
import { Reasons } from '../crds/conditions';
import type { DowngradeObservation } from './downgrade-plan';
import { downgradeTargetVersion, lowersMinor, planDowngradeGate } from './downgrade-plan';
import type { UpgradeMemberView } from './upgrade-plan';

const member = (
  ordinal: number,
  version: string,
  more: Partial<UpgradeMemberView> = {},
): UpgradeMemberView => ({
  id: `id${ordinal}`,
  name: `m-${ordinal}`,
  ordinal,
  isLearner: false,
  healthy: true,
  ready: true,
  version,
  podVersion: version,
  raftIndex: '100',
  ...more,
});
const all36 = [member(0, '3.6.16'), member(1, '3.6.16'), member(2, '3.6.16')];
const mixed = [member(0, '3.5.35'), member(1, '3.6.16'), member(2, '3.6.16')];
const all35 = [member(0, '3.5.35'), member(1, '3.5.35'), member(2, '3.5.35')];
const seen = (o: Partial<DowngradeObservation>): DowngradeObservation => ({ storageVersions: {}, ...o });

type Row = [
  string,
  UpgradeMemberView[],
  string,
  DowngradeObservation | undefined,
  object | undefined,
  RegExp?,
];
type FullRow = [
  string,
  UpgradeMemberView[],
  string,
  DowngradeObservation | undefined,
  object | undefined,
  RegExp | null,
];

describe('planDowngradeGate', () => {
  const rows: Row[] = [
    [
      'without an observation, a cluster all on 3.6 asked for 3.5 enables the downgrade first (this starts the operation)',
      all36,
      '3.5.35',
      undefined,
      { kind: 'EnableDowngrade', from: '3.6.16', to: '3.5.35', targetVersion: '3.5.0' },
    ],
    [
      'with etcd still at 3.6 and no downgrade enabled, it enables the downgrade',
      all36,
      '3.5.35',
      seen({ clusterVersion: '3.6.0', storageVersions: { 'm-0': '3.6.0' }, enabled: false }),
      { kind: 'EnableDowngrade', targetVersion: '3.5.0' },
    ],
    [
      'an enabled downgrade whose cluster version has not moved yet waits for etcd',
      all36,
      '3.5.35',
      seen({ clusterVersion: '3.6.0', enabled: true }),
      { kind: 'Wait', reason: Reasons.WaitingForClusterVersion },
      /downgrade to 3\.5 enabled; waiting for etcd to move the cluster version from 3\.6\.0 to 3\.5\.0/,
    ],
    [
      'a cluster version at 3.5 with a storage version still at 3.6 waits for the migration, naming the member',
      all36,
      '3.5.35',
      seen({ clusterVersion: '3.5.0', storageVersions: { 'm-0': '3.5.0', 'm-1': '3.6.0' }, enabled: true }),
      { kind: 'Wait', reason: Reasons.WaitingForClusterVersion },
      /storage version of m-1 \(3\.6\.0\) to 3\.5\.0/,
    ],
    [
      'once cluster and storage versions are 3.5 the roll goes on (upgradeMembers decides)',
      all36,
      '3.5.35',
      seen({
        clusterVersion: '3.5.0',
        storageVersions: { 'm-0': '3.5.0', 'm-1': '3.5.0', 'm-2': '3.5.0' },
        enabled: true,
      }),
      undefined,
    ],
    [
      'right after an upgrade, every member on 3.6 but the cluster version still 3.5 and nothing enabled: wait for etcd to raise it, roll no one',
      all36,
      '3.5.35',
      seen({
        clusterVersion: '3.5.0',
        storageVersions: { 'm-0': '3.5.0', 'm-1': '3.5.0', 'm-2': '3.5.0' },
        enabled: false,
      }),
      { kind: 'Wait', reason: Reasons.WaitingForClusterVersion },
      /every member runs 3\.6 but etcd's cluster version is still 3\.5\.0; waiting for etcd to finish the upgrade/,
    ],
    [
      'a rollback of an unfinished upgrade (one member still runs 3.5, cluster version 3.5, nothing enabled) rolls on',
      mixed,
      '3.5.35',
      seen({
        clusterVersion: '3.5.0',
        storageVersions: { 'm-0': '3.5.0', 'm-1': '3.5.0', 'm-2': '3.5.0' },
        enabled: false,
      }),
      undefined,
    ],
    [
      'a member already on 3.5 means the cluster version is 3.5 (a rollback): no enable without an observation',
      mixed,
      '3.5.35',
      undefined,
      undefined,
    ],
    [
      'an unready member holds the enable back',
      [member(0, '3.6.16'), member(1, '3.6.16', { ready: false }), member(2, '3.6.16')],
      '3.5.35',
      seen({ clusterVersion: '3.6.0', enabled: false }),
      { kind: 'Wait', reason: Reasons.MemberNotReady },
      /m-1 is not ready; the downgrade is enabled only while every member is/,
    ],
    [
      'an observation without a cluster version waits rather than enabling blind',
      all36,
      '3.5.35',
      seen({}),
      { kind: 'Wait', reason: Reasons.MemberNotReady },
    ],
    [
      'every member on 3.5 with the downgrade still enabled waits for etcd to finish it',
      all35,
      '3.5.35',
      seen({ clusterVersion: '3.5.0', enabled: true }),
      { kind: 'Wait', reason: Reasons.WaitingForClusterVersion },
      /every member runs 3\.5\.35; waiting for etcd to finish the downgrade to 3\.5/,
    ],
    [
      'every member on 3.5 and the downgrade finished: nothing to do',
      all35,
      '3.5.35',
      seen({ clusterVersion: '3.5.0', enabled: false }),
      undefined,
    ],
    ['an upgrade is none of its business', all35, '3.6.16', undefined, undefined],
    ['a patch downgrade within 3.6 needs no downgrade API', all36, '3.6.10', undefined, undefined],
  ];
  test.each(rows.map((r): FullRow => [r[0], r[1], r[2], r[3], r[4], r[5] ?? null]))(
    '%s',
    (_name, members, target, observation, want, message) => {
      const decision = planDowngradeGate({ target, members, ...(observation ? { observation } : {}) });
      if (want === undefined) expect(decision).toBeUndefined();
      else expect(decision).toMatchObject(want);
      if (message) expect(decision?.kind === 'Wait' ? decision.message : '').toMatch(message);
    },
  );
});

describe('lowersMinor and downgradeTargetVersion', () => {
  test.each([
    ['3.6.16', '3.5.35', true],
    ['3.6.16', '3.6.10', false],
    ['3.5.35', '3.6.16', false],
    ['garbage', '3.5.35', false],
  ])('%s -> %s lowers the minor: %s', (from, to, want) => {
    expect(lowersMinor(from, to)).toBe(want);
  });
  test.each([
    ['3.5.35', '3.5.0'],
    ['v3.5.35', undefined],
  ])('etcd takes %s as %s', (version, want) => {
    expect(downgradeTargetVersion(version)).toBe(want);
  });
});
