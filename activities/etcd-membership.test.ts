import type { KubernetesObject } from '@kubernetes/client-node';
import { Labels } from '../crds/labels';
import { memberClientURL } from '../crds/names';
import type { EtcdAdmin } from './etcd-admin';
import type { KubeObjects } from './kube-objects';
import { clusterCallEndpoints, createMembershipActivities } from './etcd-membership';

const ref = { namespace: 'prod', name: 'main', uid: 'uid-main' };
const pod = (name: string, extra: { deleting?: boolean } = {}): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: ref.namespace,
    labels: { [Labels.cluster]: ref.name, [Labels.role]: 'voter' },
    ownerReferences: [
      { apiVersion: 'etcd.conductor.dev/v1alpha1', kind: 'EtcdCluster', name: 'main', uid: ref.uid },
    ],
    ...(extra.deleting ? { deletionTimestamp: new Date(0) } : {}),
  },
});
const kubeWith = (pods: KubernetesObject[]): KubeObjects =>
  ({ list: async <T>() => pods as T[] }) as unknown as KubeObjects;
const urls = (...names: string[]) => names.map((n) => memberClientURL(ref, n));

describe('clusterCallEndpoints', () => {
  const pods = [
    pod('main-0'),
    pod('main-1'),
    pod('main-2', { deleting: true }),
    pod('main-3'),
    pod('main-4'),
  ];

  test.each([
    [
      'no member named removed: every voter Pod not being deleted',
      [],
      urls('main-0', 'main-1', 'main-3', 'main-4'),
    ],
    ['a removed member whose Pod lingers is left out', ['main-4'], urls('main-0', 'main-1', 'main-3')],
    ['two removed members', ['main-4', 'main-3'], urls('main-0', 'main-1')],
    [
      'a removed name without a Pod changes nothing',
      ['main-9'],
      urls('main-0', 'main-1', 'main-3', 'main-4'),
    ],
  ])('%s', async (_what, removed, expected) => {
    expect(await clusterCallEndpoints(kubeWith(pods), ref, removed)).toEqual(expected);
  });
});

describe('removeMember', () => {
  test("asks etcd through the members' Pods, never through one this operation removed before", async () => {
    const asked: string[][] = [];
    const etcd = {
      remove: async (endpoints: string[]) => {
        asked.push(endpoints);
        return 'removed' as const;
      },
    } as unknown as EtcdAdmin;
    const acts = createMembershipActivities({
      kube: kubeWith([pod('main-0'), pod('main-1'), pod('main-2'), pod('main-3'), pod('main-4')]),
      etcd,
      imageFor: () => undefined,
    });
    expect(await acts.removeMember({ ref, id: '3', removed: ['main-4'] })).toBe('removed');
    expect(await acts.removeMember({ ref, id: '4' })).toBe('removed');
    expect(asked).toEqual([
      urls('main-0', 'main-1', 'main-2', 'main-3'),
      urls('main-0', 'main-1', 'main-2', 'main-3', 'main-4'),
    ]);
  });

  test('asks again while etcd refuses it until its voters are healthy, and passes any other error on at once', async () => {
    const refusals = ['etcdserver: unhealthy cluster', 'etcdserver: unhealthy cluster'];
    let calls = 0;
    const etcd = {
      remove: async () => {
        calls += 1;
        const refusal = refusals.shift();
        if (refusal) throw new Error(refusal);
        return 'removed' as const;
      },
    } as unknown as EtcdAdmin;
    const acts = createMembershipActivities({
      kube: kubeWith([pod('main-0'), pod('main-1'), pod('main-2')]),
      etcd,
      imageFor: () => undefined,
    });
    expect(await acts.removeMember({ ref, id: '3' })).toBe('removed');
    expect(calls).toBe(3);

    const failing = createMembershipActivities({
      kube: kubeWith([pod('main-0')]),
      etcd: {
        remove: async () => {
          calls += 1;
          throw new Error('etcdserver: request timed out');
        },
      } as unknown as EtcdAdmin,
      imageFor: () => undefined,
    });
    calls = 0;
    await expect(failing.removeMember({ ref, id: '3' })).rejects.toThrow('request timed out');
    expect(calls).toBe(1);
  });
});
