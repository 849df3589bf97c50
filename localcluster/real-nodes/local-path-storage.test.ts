// The real nodes' StorageClasses and where the host provisioner keeps each class's volumes.
import { stackLayout } from '../stack-layout';
import { localPathManifests, provisionerFolders } from './local-path-storage';
import { realNodeLayout } from './real-node-layout';

const net = realNodeLayout(stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.60.0.1' }));
type Item = { kind: string; metadata: { name: string; annotations?: Record<string, string> } } & Record<
  string,
  unknown
>;
const items = (localPathManifests() as { items: Item[] }).items;

describe('local-path storage on real nodes', () => {
  it("keeps each node's volumes inside that node's own folder of the stack, and no other node's", () => {
    expect(provisionerFolders(net)).toEqual({
      'rancher.io/local-path': {
        'node-a': '/s/nodes/node-a/volumes',
        'node-b': '/s/nodes/node-b/volumes',
        'node-c': '/s/nodes/node-c/volumes',
      },
      'etcd-conductor.dev/local-path-sized': {
        'node-a': '/s/nodes/node-a/sized-volumes',
        'node-b': '/s/nodes/node-b/sized-volumes',
        'node-c': '/s/nodes/node-c/sized-volumes',
      },
    });
  });

  it('is the default StorageClass and binds only once the scheduler has chosen the node', () => {
    const sc = items.find((i) => i.kind === 'StorageClass' && i.metadata.name === 'local-path');
    expect(sc?.metadata.annotations?.['storageclass.kubernetes.io/is-default-class']).toBe('true');
    expect(sc).toMatchObject({
      provisioner: 'rancher.io/local-path',
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Delete',
    });
  });

  it('offers a second, non-default class whose volumes live in the size-limited folders', () => {
    const sc = items.find((i) => i.kind === 'StorageClass' && i.metadata.name === 'local-path-sized');
    expect(sc?.metadata.annotations).toBeUndefined();
    expect(sc).toMatchObject({
      provisioner: 'etcd-conductor.dev/local-path-sized',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
  });

  it('creates no late class: tests create it after the claims that name it', () => {
    expect(items.filter((i) => i.kind === 'StorageClass').map((i) => i.metadata.name)).toEqual([
      'local-path',
      'local-path-sized',
    ]);
  });
});
