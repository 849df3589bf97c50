// The real apiserver enforces spec.bootstrap.restore's CEL rules: exactly one source, a sha256 where one is needed, and bootstrap immutable after creation.
import type { EtcdClusterSpec } from '../../crds/etcd-cluster';
import { apiMessage } from '../localcluster/kube';
import type { Harness } from '../support/cluster-harness';
import { connect, createCluster, freshNamespace, patchSpec } from '../support/cluster-harness';

let h: Harness;
let ns: string;
beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'restore-cel');
});

const SHA = '0123456789abcdef'.repeat(4);
const s3 = {
  endpoint: 'http://127.0.0.1:9000',
  bucket: 'backups',
  key: 'etcd/main/snap.db',
  region: 'us-east-1',
  credentialsSecretRef: { name: 's3' },
};

async function refusal(name: string, spec: Record<string, unknown>): Promise<string> {
  try {
    // Replicas 0 keeps the accepted objects idle: nothing is started for them.
    await createCluster(h, ns, name, { replicas: 0, ...spec } as Partial<EtcdClusterSpec>);
  } catch (err) {
    return apiMessage(err);
  }
  return 'accepted';
}

describe('spec.bootstrap.restore validation', () => {
  test.each<[string, Record<string, unknown>, string]>([
    [
      'both snapshotRef and s3',
      { source: { snapshotRef: { name: 'snap' }, s3, sha256: SHA } },
      'restore.source needs exactly one of snapshotRef (an EtcdSnapshot), s3 (an object), pvc (a file on a claim) or continuous (the continuous backup of a cluster)',
    ],
    [
      'no source at all',
      { source: {} },
      'restore.source needs exactly one of snapshotRef (an EtcdSnapshot), s3 (an object), pvc (a file on a claim) or continuous (the continuous backup of a cluster)',
    ],
    ['s3 without a sha256', { source: { s3 } }, 'restore.source.sha256 is required with s3 or pvc'],
    [
      'snapshotRef with a sha256',
      { source: { snapshotRef: { name: 'snap' }, sha256: SHA } },
      'must be left out with snapshotRef',
    ],
    [
      'a sha256 that is not 64 hex digits',
      { source: { pvc: { claimName: 'c', subPath: 'snap.db' }, sha256: 'xyz'.repeat(21) + 'a' } },
      'restore.source.sha256 must be the 64 hex digits',
    ],
    [
      'a pvc path that climbs out of the claim',
      { source: { pvc: { claimName: 'c', subPath: '../other/snap.db' }, sha256: SHA } },
      'no leading slash and no .. segments',
    ],
  ])('refuses %s with a message a user understands', async (_name, restore, message) => {
    const name = `bad-${Math.random().toString(36).slice(2, 8)}`;
    expect(await refusal(name, { bootstrap: { restore } })).toContain(message);
  });

  test('accepts each single source, and then refuses any change, addition or removal of bootstrap', async () => {
    for (const [name, source] of [
      ['from-ref', { snapshotRef: { name: 'snap' } }],
      ['from-s3', { s3, sha256: SHA.toUpperCase() }],
      ['from-pvc', { pvc: { claimName: 'c', subPath: 'main/snap.db' }, sha256: SHA }],
    ] as const) {
      expect(await refusal(name, { bootstrap: { restore: { source } } })).toBe('accepted');
    }
    await createCluster(h, ns, 'plain', { replicas: 0 });
    const immutable = 'spec.bootstrap cannot be added, changed or removed once the EtcdCluster exists';
    const patchMessage = async (name: string, spec: Record<string, unknown>) =>
      patchSpec(h, ns, name, spec as Partial<EtcdClusterSpec>).then(
        () => 'accepted',
        (err: unknown) => apiMessage(err),
      );
    expect(
      await patchMessage('from-ref', {
        bootstrap: { restore: { source: { snapshotRef: { name: 'other' } } } },
      }),
    ).toContain(immutable);
    expect(await patchMessage('from-ref', { bootstrap: null })).toContain(immutable);
    expect(
      await patchMessage('plain', { bootstrap: { restore: { source: { snapshotRef: { name: 'snap' } } } } }),
    ).toContain(immutable);
    // Other fields stay editable.
    expect(await patchMessage('from-ref', { progressDeadlineSeconds: 120 })).toBe('accepted');
  });
});
