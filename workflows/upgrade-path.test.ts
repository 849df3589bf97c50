// etcd's version path rules as a table: patch changes, one minor up from the required patch, rollbacks of an unfinished upgrade, and refusals that name the path.
import { MINIMUM_PATCH_BEFORE_NEXT_MINOR, parseVersion, upgradePath } from './upgrade-path';
import type { UpgradePath } from './upgrade-path';

type Row = [
  string,
  (string | undefined)[],
  string,
  Partial<UpgradePath> & { kind: UpgradePath['kind'] },
  RegExp?,
];

describe('upgradePath', () => {
  const rows: Row[] = [
    [
      'members that all run the target need nothing',
      ['3.6.16', '3.6.16', '3.6.16'],
      '3.6.16',
      { kind: 'none' },
    ],
    ['no reported version at all needs nothing', [undefined, undefined], '3.6.16', { kind: 'none' }],
    [
      'a patch upgrade is allowed',
      ['3.6.10', '3.6.10'],
      '3.6.16',
      { kind: 'allowed', from: ['3.6.10'], to: '3.6.16', rollback: false },
    ],
    [
      'a patch downgrade is allowed (patches of one minor share their storage format)',
      ['3.6.16'],
      '3.6.10',
      { kind: 'allowed', from: ['3.6.16'], rollback: false },
    ],
    [
      'one minor up from 3.5.35 is allowed',
      ['3.5.35', '3.5.35', '3.5.35'],
      '3.6.16',
      { kind: 'allowed', from: ['3.5.35'], to: '3.6.16', rollback: false },
    ],
    [
      'one minor up from exactly the required 3.5 patch is allowed',
      ['3.5.32'],
      '3.6.0',
      { kind: 'allowed', from: ['3.5.32'] },
    ],
    [
      'a half-done upgrade (3.5 and 3.6 mixed) goes on to 3.6',
      ['3.5.35', '3.6.16', '3.5.35'],
      '3.6.16',
      { kind: 'allowed', from: ['3.5.35'] },
    ],
    [
      'a half-done upgrade may roll back to 3.5 while a member still runs 3.5',
      ['3.5.35', '3.6.16', '3.6.16'],
      '3.5.35',
      { kind: 'allowed', from: ['3.6.16'], rollback: true },
    ],
    [
      "a downgrade 3.6 -> 3.5 after a completed upgrade is allowed through etcd's downgrade API",
      ['3.6.16', '3.6.16', '3.6.16'],
      '3.5.35',
      { kind: 'allowed', from: ['3.6.16'], to: '3.5.35', rollback: false, downgrade: true },
    ],
    [
      'a downgrade to exactly the floor patch is allowed',
      ['3.6.16'],
      '3.5.32',
      { kind: 'allowed', downgrade: true },
    ],
    [
      'a downgrade that already restarted one member on 3.5 is a rollback: the cluster version is 3.5 already',
      ['3.5.35', '3.6.16', '3.6.16'],
      '3.5.35',
      { kind: 'allowed', rollback: true },
    ],
    ['unparseable versions are ignored', ['garbage', '3.6.16'], '3.6.16', { kind: 'none' }],
  ];
  const refusals: Row[] = [
    [
      '3.5 below the required patch is refused and names the patch to take first',
      ['3.5.20', '3.5.20'],
      '3.6.16',
      { kind: 'refused', from: ['3.5.20'], to: '3.6.16' },
      /requires every 3\.5 member to run 3\.5\.32 or later before 3\.6; set version to 3\.5\.32 .* first, then to 3\.6\.16/,
    ],
    [
      'a skipped minor is refused and names the minor to take first',
      ['3.4.30'],
      '3.6.16',
      { kind: 'refused' },
      /3\.4\.30 -> 3\.6\.16 skips a minor version.*upgrade to the newest 3\.5 patch first, then to 3\.6\.16/,
    ],
    ['a major change is refused', ['3.6.16'], '4.0.0', { kind: 'refused' }, /changes the major version/],
    [
      'a downgrade to a 3.5 patch below the floor is refused, naming the patch to take',
      ['3.6.16', '3.6.16', '3.6.16'],
      '3.5.20',
      { kind: 'refused', from: ['3.6.16'] },
      /downgrade 3\.6\.16 -> 3\.5\.20 is refused: a cluster that runs 3\.6 may only have 3\.5 members on 3\.5\.32 or later.*set version to 3\.5\.32 or later/,
    ],
    [
      'a rollback of a half-done upgrade below the floor is refused too',
      ['3.5.35', '3.6.16'],
      '3.5.30',
      { kind: 'refused' },
      /3\.5\.32 or later/,
    ],
    [
      'a downgrade over two minors is refused',
      ['3.6.16'],
      '3.4.30',
      { kind: 'refused' },
      /skips a minor version/,
    ],
    [
      'a mixed cluster with one member below the floor is refused as a whole',
      ['3.5.35', '3.5.20'],
      '3.6.16',
      { kind: 'refused', from: ['3.5.20', '3.5.35'] },
      /3\.5\.20 -> 3\.6\.16/,
    ],
  ];
  test.each([...rows, ...refusals])('%s', (...row) => {
    const [, running, target, want, message] = row as Row;
    const path = upgradePath(running, target);
    expect(path).toMatchObject(want);
    if (message) expect(path.kind === 'refused' ? path.message : '').toMatch(message);
  });

  test('the 3.5 floor is the one etcd 3.6 upgrade guide names', () => {
    expect(MINIMUM_PATCH_BEFORE_NEXT_MINOR['3.5']).toBe(32);
  });
});

describe('parseVersion', () => {
  test.each([
    ['3.6.16', { major: 3, minor: 6, patch: 16 }],
    ['v3.6.16', undefined],
    ['3.6', undefined],
    ['3.6.16-rc.0', undefined],
    [undefined, undefined],
  ])('%s', (text, want) => {
    expect(parseVersion(text)).toEqual(want);
  });
});
