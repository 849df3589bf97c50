// The downgrade activities against a fake etcd that answers like 3.6.16 and 3.5.35 did: enable is safe to repeat, Validate tells enabled from finished, a refused target is permanent.
import { ApplicationFailure } from '@temporalio/common';
import type { DowngradeEtcd, MemberVersions } from './downgrade-activities';
import {
  classifyDowngradeError,
  createDowngradeActivities,
  highestClusterVersion,
  previousMinor,
} from './downgrade-activities';

const ref = { namespace: 'ns', name: 'c', uid: 'u' };
const members = ['c-0', 'c-1', 'c-2'];

/** etcd's downgrade state machine as observed on the real binaries (see docs/operations.md). */
function fakeEtcd(state: { cluster: string; enabled: boolean; storage?: string }) {
  const calls: string[] = [];
  const allowed = () => previousMinor(state.cluster);
  const etcd: DowngradeEtcd = {
    async downgrade(_endpoints, action, version) {
      calls.push(`${action} ${version}`);
      if (action === 'Cancel') throw new Error('not used');
      if (version !== allowed()) throw new Error('etcdserver: invalid downgrade target version');
      if (state.enabled) throw new Error('etcdserver: cluster has a downgrade job in progress');
      if (action === 'Enable') state.enabled = true;
    },
    async versions(): Promise<MemberVersions> {
      return {
        server: '3.6.16',
        cluster: state.cluster,
        ...(state.storage ? { storage: state.storage } : {}),
      };
    },
  };
  return { etcd, calls };
}

describe('enableDowngrade', () => {
  test('validates, then enables', async () => {
    const { etcd, calls } = fakeEtcd({ cluster: '3.6.0', enabled: false });
    const acts = createDowngradeActivities({ etcd });
    await expect(acts.enableDowngrade({ ref, members, targetVersion: '3.5.0' })).resolves.toBe('enabled');
    expect(calls).toEqual(['Validate 3.5.0', 'Enable 3.5.0']);
  });
  test('a retry after the enable went through is success', async () => {
    const { etcd } = fakeEtcd({ cluster: '3.6.0', enabled: true });
    const acts = createDowngradeActivities({ etcd });
    await expect(acts.enableDowngrade({ ref, members, targetVersion: '3.5.0' })).resolves.toBe(
      'already-enabled',
    );
  });
  test('a retry after etcd already moved the cluster version is success', async () => {
    const { etcd } = fakeEtcd({ cluster: '3.5.0', enabled: true });
    const acts = createDowngradeActivities({ etcd });
    await expect(acts.enableDowngrade({ ref, members, targetVersion: '3.5.0' })).resolves.toBe(
      'already-at-target',
    );
  });
  test("a target etcd refuses is a permanent DowngradeRefused naming etcd's message", async () => {
    const { etcd } = fakeEtcd({ cluster: '3.6.0', enabled: false });
    const acts = createDowngradeActivities({ etcd });
    const err = await acts.enableDowngrade({ ref, members, targetVersion: '3.4.0' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('DowngradeRefused');
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((err as ApplicationFailure).message).toContain('invalid downgrade target version');
  });
});

describe('observeDowngrade', () => {
  test.each([
    [
      '3.6 before the enable',
      { cluster: '3.6.0', enabled: false, storage: '3.6.0' },
      { clusterVersion: '3.6.0', enabled: false },
    ],
    [
      '3.6 right after the enable',
      { cluster: '3.6.0', enabled: true, storage: '3.6.0' },
      { clusterVersion: '3.6.0', enabled: true },
    ],
    [
      'cluster version moved, downgrade still on',
      { cluster: '3.5.0', enabled: true, storage: '3.5.0' },
      { clusterVersion: '3.5.0', enabled: true },
    ],
    [
      'all on 3.5 and etcd finished the downgrade',
      { cluster: '3.5.0', enabled: false },
      { clusterVersion: '3.5.0', enabled: false },
    ],
  ] as [string, { cluster: string; enabled: boolean; storage?: string }, object][])(
    '%s',
    async (_name, state, want) => {
      const { etcd, calls } = fakeEtcd(state);
      const acts = createDowngradeActivities({ etcd });
      const seen = await acts.observeDowngrade({ ref, members, targetVersion: '3.5.0' });
      expect(seen).toMatchObject(want);
      if (state.storage)
        expect(seen.storageVersions).toEqual({
          'c-0': state.storage,
          'c-1': state.storage,
          'c-2': state.storage,
        });
      // Only Validate is used to look: never Enable or Cancel.
      expect(calls.every((c) => c.startsWith('Validate'))).toBe(true);
    },
  );
});

describe('helpers', () => {
  test.each([
    ['etcdserver: cluster has a downgrade job in progress', 'in-progress'],
    ['3 INVALID_ARGUMENT: etcdserver: invalid downgrade target version', 'invalid-target'],
    ['9 FAILED_PRECONDITION: etcdserver: no inflight downgrade job', 'other'],
  ])('%s is %s', (message, want) => {
    expect(classifyDowngradeError(message)).toBe(want);
  });
  test('previousMinor and highestClusterVersion', () => {
    expect(previousMinor('3.5.0')).toBe('3.4.0');
    expect(previousMinor('3.0.0')).toBeUndefined();
    expect(highestClusterVersion([{ cluster: '3.5.0' }, {}, { cluster: '3.6.0' }])).toBe('3.6.0');
    expect(highestClusterVersion([{}])).toBeUndefined();
  });
});
