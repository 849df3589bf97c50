// End-to-end: EtcdSnapshots that cannot succeed fail with a clear reason, once, without a retry storm and without leaking a credential.
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  waitConverged,
} from '../support/cluster-harness';
import { createCredentialsSecret, createSnapshot, minioDestination, waitFinished } from './backup-harness';

let h: Harness;
let ns: string;
beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'snapfail');
  await createCluster(h, ns, 'one', { replicas: 1 });
  await waitConverged(h, ns, 'one', 1, 300_000);
});

const WRONG = { accessKeyId: 'not-a-key', secretAccessKey: 'definitely-not-the-secret-0123456789' };

async function jobsOf(snapshot: string) {
  const jobs = await h.kc
    .makeApiClient((await import('@kubernetes/client-node')).BatchV1Api)
    .listNamespacedJob({
      namespace: ns,
      labelSelector: `etcd.conductor.dev/snapshot=${snapshot},app.kubernetes.io/name=etcd-snapshot`,
    });
  return jobs.items;
}

async function podsOf(snapshot: string) {
  const pods = await h.core.listNamespacedPod({
    namespace: ns,
    labelSelector: `etcd.conductor.dev/snapshot=${snapshot},app.kubernetes.io/name=etcd-snapshot`,
  });
  return pods.items;
}

describe('EtcdSnapshot failures', () => {
  test('wrong credentials: Failed with InvalidCredentials after one Job with one Pod, and the secret is nowhere in status', async () => {
    await createCredentialsSecret(h, ns, 'wrong', WRONG);
    await createSnapshot(h, ns, 'badcreds', {
      clusterRef: { name: 'one' },
      destination: minioDestination(h, 'wrong', 'e2e'),
    });
    const done = await waitFinished(h, ns, 'badcreds');
    const ready = done.status?.conditions?.find((c) => c.type === 'Ready');
    expect({ phase: done.status?.phase, reason: ready?.reason }).toEqual({
      phase: 'Failed',
      reason: 'InvalidCredentials',
    });
    expect(ready?.message).toBeTruthy();
    expect(JSON.stringify(done.status)).not.toContain(WRONG.secretAccessKey);
    expect(done.status?.attempts).toBe(1);
    // The permanent failure ended the Job at once (podFailurePolicy), so exactly one Pod ever ran.
    expect((await jobsOf('badcreds')).map((j) => j.metadata?.name)).toEqual(['badcreds-1']);
    expect(await podsOf('badcreds')).toHaveLength(1);
  });

  test('a bucket that does not exist: Failed with BucketNotFound after one Job', async () => {
    await createCredentialsSecret(h, ns, 'good');
    await createSnapshot(h, ns, 'nobucket', {
      clusterRef: { name: 'one' },
      destination: minioDestination(h, 'good', 'e2e', 'no-such-bucket-e2e'),
    });
    const done = await waitFinished(h, ns, 'nobucket');
    expect(done.status?.phase).toBe('Failed');
    expect(done.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('BucketNotFound');
    expect(done.status?.attempts).toBe(1);
    expect(await podsOf('nobucket')).toHaveLength(1);
  });

  test('a cluster that is not Available (paused) or does not exist: Failed with ClusterNotAvailable before any Job', async () => {
    await createCredentialsSecret(h, ns, 'creds');
    await createCluster(h, ns, 'paused', { replicas: 0 });
    await eventually('the paused cluster to say so', async () => {
      const c = await getCluster(h, ns, 'paused');
      return c.status?.conditions?.find((x) => x.type === 'Available')?.reason === 'Paused' ? c : undefined;
    });
    for (const [snapshot, cluster, says] of [
      ['ofpaused', 'paused', 'is not Available (Paused'],
      ['ofnothing', 'nothing', 'does not exist'],
    ] as const) {
      await createSnapshot(h, ns, snapshot, {
        clusterRef: { name: cluster },
        destination: minioDestination(h, 'creds', 'e2e'),
      });
      const done = await waitFinished(h, ns, snapshot);
      const ready = done.status?.conditions?.find((c) => c.type === 'Ready');
      expect({ phase: done.status?.phase, reason: ready?.reason }).toEqual({
        phase: 'Failed',
        reason: 'ClusterNotAvailable',
      });
      expect(ready?.message).toContain(says);
      expect(await jobsOf(snapshot)).toHaveLength(0);
    }
  });

  test('a destination claim that does not exist: Failed with DestinationNotFound before any Job', async () => {
    await createSnapshot(h, ns, 'noclaim', {
      clusterRef: { name: 'one' },
      destination: { pvc: { claimName: 'no-such-claim', subPath: 'etcd' } },
    });
    const done = await waitFinished(h, ns, 'noclaim');
    const ready = done.status?.conditions?.find((c) => c.type === 'Ready');
    expect({ phase: done.status?.phase, reason: ready?.reason }).toEqual({
      phase: 'Failed',
      reason: 'DestinationNotFound',
    });
    expect(ready?.message).toContain('no-such-claim');
    expect(await jobsOf('noclaim')).toHaveLength(0);
  });
});
