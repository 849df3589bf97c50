// The PersistentVolume the host provisioner creates has local-path's shape, pre-bound to its claim.
import { persistentVolume } from './host-provisioner';

describe('persistentVolume', () => {
  it('is a hostPath on the chosen node, pre-bound to the claim by uid, with the class and the claim size', () => {
    expect(
      persistentVolume({
        name: 'pvc-u1',
        provisioner: 'rancher.io/local-path',
        node: 'node-b',
        path: '/s/nodes/node-b/volumes/pvc-u1_db_data-m-0',
        capacity: '1Gi',
        accessModes: ['ReadWriteOnce'],
        reclaimPolicy: 'Delete',
        storageClassName: 'local-path',
        claim: { namespace: 'db', name: 'data-m-0', uid: 'u1' },
      }),
    ).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: 'pvc-u1',
        annotations: {
          'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path',
          'volume.kubernetes.io/selected-node': 'node-b',
        },
      },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'local-path',
        volumeMode: 'Filesystem',
        hostPath: { path: '/s/nodes/node-b/volumes/pvc-u1_db_data-m-0', type: 'DirectoryOrCreate' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-b'] }] },
            ],
          },
        },
        claimRef: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace: 'db',
          name: 'data-m-0',
          uid: 'u1',
        },
      },
    });
  });
});
