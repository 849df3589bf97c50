// Faults injected through the process-backed nodes' fault-control endpoint act on real processes: a crashed container
// restarts with its claim's data, a node taken down goes NotReady and loses its processes. That endpoint and the claim
// folders are the process runtime's own, so this file brings up a process-node stack of its own; the same faults on
// real nodes are test/realnodes/storage.test.ts and node-faults.test.ts.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FaultClient } from '../../localcluster/fault-client';
import { findStackProcesses } from '../../localcluster/process-scan';
import { connect, createNamespace, deleteNamespace, eventually, type Kube } from './kube';
import { dnsName, etcdctl, etcdMemberPod, headlessService, isReady } from './etcd-pod';
import { useProcessNodeStack } from '../support/process-node-stack';

/** B = 78: a host address of its own, apart from up-down.test.ts (77) and every helper's stack. */
useProcessNodeStack('127.78.0.1');

describe('fault injection on the local stack', () => {
  let kube: Kube;
  let ns: string;
  let faults: FaultClient;
  beforeAll(async () => {
    kube = connect();
    faults = new FaultClient(kube.info.faultControlUrl ?? '');
    ns = await createNamespace(kube, 'faults');
  }, 60000);
  afterAll(async () => {
    for (const n of await faults.listNodes()) if (n.down) await faults.nodeUp(n.name);
    await deleteNamespace(kube, ns);
  }, 60000);

  const pod = (name: string) => kube.core.readNamespacedPod({ namespace: ns, name });
  const claimDirs = (claimUid: string) =>
    readdirSync(join(kube.info.stateDir, 'claims')).filter((d) => d.endsWith(`_${claimUid}`));

  it("a crashed container restarts with a higher restart count and its claim's data survives; the claim's data outlives the Pod and goes with the claim", async () => {
    const claim = await kube.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'data-keeper-0' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    await kube.core.createNamespacedService({ namespace: ns, body: headlessService('keeper') });
    const spec = {
      namespace: ns,
      name: 'keeper-0',
      subdomain: 'keeper',
      members: ['keeper-0'],
      claim: 'data-keeper-0',
    };
    await kube.core.createNamespacedPod({ namespace: ns, body: etcdMemberPod(spec) });
    await eventually('keeper-0 to be Ready', async () => isReady(await pod('keeper-0')), 60000);
    const endpoint = `http://${dnsName(spec)}:2379`;
    await eventually(
      'a write to keeper-0',
      async () => (await etcdctl(kube.info, endpoint, 'put', 'survivor', 'yes')).includes('OK'),
      30000,
    );
    const restartsBefore = (await pod('keeper-0')).status?.containerStatuses?.[0]?.restartCount ?? 0;

    await faults.crashContainer(ns, 'keeper-0');
    await eventually(
      'keeper-0 to restart and be Ready again',
      async () => {
        const p = await pod('keeper-0');
        return (p.status?.containerStatuses?.[0]?.restartCount ?? 0) > restartsBefore && isReady(p);
      },
      60000,
    );
    expect((await pod('keeper-0')).status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode).toBe(137);
    await eventually(
      'the key after the restart',
      async () => (await etcdctl(kube.info, endpoint, 'get', 'survivor', '--print-value-only')) === 'yes\n',
      30000,
    );

    await kube.core.deleteNamespacedPod({ namespace: ns, name: 'keeper-0' });
    await eventually(
      'keeper-0 to be gone',
      async () =>
        !(await pod('keeper-0').then(
          () => true,
          () => false,
        )),
      60000,
    );
    const uid = claim.metadata?.uid ?? '';
    expect(claimDirs(uid)).toHaveLength(1);
    const dir = join(kube.info.stateDir, 'claims', claimDirs(uid)[0] ?? '');
    expect(readdirSync(dir).length).toBeGreaterThan(0);

    await kube.core.deleteNamespacedPersistentVolumeClaim({ namespace: ns, name: 'data-keeper-0' });
    await eventually("the claim's data to be removed", async () => !existsSync(dir), 60000);
  }, 240000);

  it('a node taken down turns NotReady and its processes are gone; back up, it turns Ready', async () => {
    const node = 'node-c';
    const spec = {
      namespace: ns,
      name: 'pinned-0',
      subdomain: 'pinned',
      members: ['pinned-0'],
      nodeName: node,
    };
    await kube.core.createNamespacedService({ namespace: ns, body: headlessService('pinned') });
    await kube.core.createNamespacedPod({ namespace: ns, body: etcdMemberPod(spec) });
    await eventually('pinned-0 to be Ready', async () => isReady(await pod('pinned-0')), 60000);
    const nodeDir = join(kube.info.stateDir, 'nodes', node);
    const nodeProcesses = () => findStackProcesses(nodeDir, undefined);
    expect(nodeProcesses().length).toBeGreaterThan(0);

    const readyStatus = async () =>
      (await kube.core.readNode({ name: node })).status?.conditions?.find((c) => c.type === 'Ready')?.status;
    await faults.nodeDown(node);
    // SIGKILL is sent by nodeDown; the kernel needs a moment to tear a big process down.
    await eventually(
      `the processes of ${node} to be gone`,
      async () => nodeProcesses().length === 0,
      5000,
      100,
    );
    // The controller manager marks a silent node Unknown after --node-monitor-grace-period (30 s here).
    await eventually(`${node} to turn NotReady`, async () => (await readyStatus()) !== 'True', 90000, 1000);

    await faults.nodeUp(node);
    await eventually(`${node} to turn Ready again`, async () => (await readyStatus()) === 'True', 60000, 500);
    await eventually('pinned-0 to run again on the node', async () => isReady(await pod('pinned-0')), 90000);
  }, 300000);
});
