// End-to-end: one-shot EtcdSnapshots of a real 3-member cluster into the stack's MinIO, through the operator the stack runs.
import { BatchV1Api } from '@kubernetes/client-node';
import type { S3Location } from '../../crds/etcd-snapshot';
import { SnapshotLabels } from '../../crds/etcd-snapshot';
import { Labels } from '../../crds/labels';
import type { Harness } from '../support/cluster-harness';
import { connect, createCluster, freshNamespace, waitConverged, writeKeys } from '../support/cluster-harness';
import {
  createCredentialsSecret,
  createSnapshot,
  hashObject,
  minioDestination,
  s3Client,
  waitFinished,
} from './backup-harness';

let h: Harness;
beforeAll(() => {
  h = connect();
});

describe('EtcdSnapshot to S3', () => {
  test('a snapshot of a 3-member cluster with known keys lands in MinIO with the size and sha256 status records', async () => {
    const ns = await freshNamespace(h, 'snap');
    // A toleration every node satisfies: the snapshot Job must carry it as the members do.
    const toleration = {
      key: 'example.com/etcd-only',
      operator: 'Exists' as const,
      effect: 'NoSchedule' as const,
    };
    // And a pull Secret (for a private mirror; the images are local here, so it is named, not needed).
    const imagePullSecrets = [{ name: 'mirror-pull' }];
    await createCluster(h, ns, 'main', { replicas: 3, tolerations: [toleration], imagePullSecrets });
    await waitConverged(h, ns, 'main', 3, 300_000);
    await writeKeys(ns, 'main', 'known', 30);
    await createCredentialsSecret(h, ns, 's3-credentials');

    // No region: MinIO takes the default the API fills in.
    const destination = minioDestination(h, 's3-credentials', `e2e/${ns}`);
    await createSnapshot(h, ns, 'first', {
      clusterRef: { name: 'main' },
      destination: { s3: { ...destination.s3, region: undefined } as unknown as S3Location },
    });
    const done = await waitFinished(h, ns, 'first');
    expect(done.spec.destination.s3?.region).toBe('us-east-1');
    const jobs = await h.kc.makeApiClient(BatchV1Api).listNamespacedJob({
      namespace: ns,
      labelSelector: `${SnapshotLabels.snapshot}=first,app.kubernetes.io/name=etcd-snapshot`,
    });
    expect(jobs.items.map((j) => j.spec?.template.spec?.tolerations)).toEqual([[toleration]]);
    expect(jobs.items.map((j) => j.spec?.template.spec?.imagePullSecrets)).toEqual([imagePullSecrets]);
    const pods = await h.core.listNamespacedPod({ namespace: ns, labelSelector: `${Labels.cluster}=main` });
    expect(pods.items.map((p) => p.spec?.imagePullSecrets)).toEqual([
      imagePullSecrets,
      imagePullSecrets,
      imagePullSecrets,
    ]);
    const ready = done.status?.conditions?.find((c) => c.type === 'Ready');
    expect({ phase: done.status?.phase, reason: ready?.reason }).toEqual({
      phase: 'Succeeded',
      reason: 'SnapshotSucceeded',
    });
    const artifact = done.status?.artifact;
    expect(artifact).toMatchObject({
      uri: `s3://${h.stack.s3.bucket}/e2e/${ns}/first.db`,
      etcdVersion: '3.6.16',
    });
    expect(artifact?.sha256).toMatch(/^[0-9a-f]{64}$/);
    // 30 puts after bootstrap: the revision the snapshot holds is at least that.
    expect(artifact?.revision).toBeGreaterThanOrEqual(31);
    expect(Number.isNaN(Date.parse(artifact?.takenAt ?? ''))).toBe(false);
    expect(done.status?.attempts).toBe(1);

    const stored = await hashObject(s3Client(h), artifact?.uri ?? '');
    expect({ size: stored.size, sha256: stored.sha256 }).toEqual({
      size: artifact?.size,
      sha256: artifact?.sha256,
    });
    // The credentials are in no status field.
    expect(JSON.stringify(done.status)).not.toContain(h.stack.s3.secretAccessKey);

    // jobPlacement: a snapshot whose Job must run on one chosen node and without the cluster's toleration.
    const nodes = (await h.core.listNode()).items.map((n) => n.metadata?.name ?? '').sort();
    const chosen = nodes[nodes.length - 1] ?? 'no node';
    await createSnapshot(h, ns, 'pinned', {
      clusterRef: { name: 'main' },
      destination,
      jobPlacement: { nodeSelector: { 'kubernetes.io/hostname': chosen }, tolerations: [] },
    });
    const pinned = await waitFinished(h, ns, 'pinned');
    expect(pinned.status?.phase).toBe('Succeeded');
    const pinnedJobs = await h.kc.makeApiClient(BatchV1Api).listNamespacedJob({
      namespace: ns,
      labelSelector: `${SnapshotLabels.snapshot}=pinned,app.kubernetes.io/name=etcd-snapshot`,
    });
    expect(
      pinnedJobs.items.map((j) => ({
        nodeSelector: j.spec?.template.spec?.nodeSelector,
        tolerations: j.spec?.template.spec?.tolerations,
        imagePullSecrets: j.spec?.template.spec?.imagePullSecrets,
      })),
    ).toEqual([
      { nodeSelector: { 'kubernetes.io/hostname': chosen }, tolerations: undefined, imagePullSecrets },
    ]);
    const jobPods = await h.core.listNamespacedPod({
      namespace: ns,
      labelSelector: `batch.kubernetes.io/job-name=${pinnedJobs.items[0]?.metadata?.name ?? ''}`,
    });
    expect(jobPods.items.map((p) => p.spec?.nodeName)).toEqual([chosen]);
  });
});
