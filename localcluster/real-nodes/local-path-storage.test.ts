import { stackLayout } from '../stack-layout';
import { LOCAL_PATH_HELPER_IMAGE } from '../images';
import { localPathManifests, PROVISIONERS, provisionerArgs, provisionerConfig } from './local-path-storage';
import { realNodeLayout } from './real-node-layout';

const net = realNodeLayout(stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.60.0.1' }));
type Item = { kind: string; metadata: { name: string; annotations?: Record<string, string> } } & Record<
  string,
  unknown
>;
const items = (localPathManifests(net) as { items: Item[] }).items;

describe('local-path storage on real nodes', () => {
  it("keeps each node's volumes inside that node's own folder of the stack, and no other node's", () => {
    const [plain, sized] = PROVISIONERS;
    expect(provisionerConfig(net, plain)).toEqual({
      nodePathMap: [
        { node: 'node-a', paths: ['/s/nodes/node-a/volumes'] },
        { node: 'node-b', paths: ['/s/nodes/node-b/volumes'] },
        { node: 'node-c', paths: ['/s/nodes/node-c/volumes'] },
      ],
      cmdTimeoutSeconds: 120,
    });
    expect(provisionerConfig(net, sized)).toMatchObject({
      nodePathMap: [
        { node: 'node-a', paths: ['/s/nodes/node-a/sized-volumes'] },
        { node: 'node-b', paths: ['/s/nodes/node-b/sized-volumes'] },
        { node: 'node-c', paths: ['/s/nodes/node-c/sized-volumes'] },
      ],
    });
    // No DEFAULT_PATH_FOR_NON_LISTED_NODES entry: a volume on an unknown node would land outside the stack.
    for (const p of PROVISIONERS)
      expect(JSON.stringify(provisionerConfig(net, p))).not.toContain('DEFAULT_PATH');
  });

  it('lists no StorageClasses in a config, so every class naming the provisioner is served (a listed config refuses the rest)', () => {
    for (const p of PROVISIONERS) expect(provisionerConfig(net, p)).not.toHaveProperty('storageClassConfigs');
  });

  it('runs one process per provisioner name, each with its own ConfigMap', () => {
    expect(PROVISIONERS.map((p) => [p.provisioner, p.configMap])).toEqual([
      ['rancher.io/local-path', 'local-path-config'],
      ['etcd-conductor.dev/local-path-sized', 'local-path-sized-config'],
    ]);
    const configMaps = items.filter((i) => i.kind === 'ConfigMap').map((i) => i.metadata.name);
    expect(configMaps).toEqual(['local-path-config', 'local-path-sized-config']);
    for (const p of PROVISIONERS) {
      const args = provisionerArgs('/k', p);
      expect(args).toContain(`--provisioner-name=${p.provisioner}`);
      expect(args).toContain(`--configmap-name=${p.configMap}`);
    }
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

  it('runs helper Pods from the image built here, never pulled', () => {
    const cm = items.find((i) => i.kind === 'ConfigMap') as { data: Record<string, string> } | undefined;
    const pod = JSON.parse(cm?.data['helperPod.yaml'] ?? '{}') as {
      spec: { containers: Array<{ image: string; imagePullPolicy: string }> };
    };
    expect(pod.spec.containers[0]).toMatchObject({
      image: LOCAL_PATH_HELPER_IMAGE,
      imagePullPolicy: 'IfNotPresent',
    });
    expect(cm?.data.setup).toContain('mkdir -m 0777 -p "$VOL_DIR"');
    expect(provisionerArgs('/k', PROVISIONERS[0])).toContain(`--helper-image=${LOCAL_PATH_HELPER_IMAGE}`);
  });
});
