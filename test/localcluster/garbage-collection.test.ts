// The controller manager's garbage collector deletes dependents once their owner is gone, as in a real cluster.
import { connect, createNamespace, deleteNamespace, eventually, type Kube } from './kube';

describe('garbage collection', () => {
  let kube: Kube;
  let ns: string;
  beforeAll(async () => {
    kube = connect();
    ns = await createNamespace(kube, 'gc');
  });
  afterAll(() => deleteNamespace(kube, ns));

  it('deleting an owner garbage-collects its dependents', async () => {
    const owner = await kube.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'owner' }, data: { role: 'owner' } },
    });
    const uid = owner.metadata?.uid ?? '';
    for (const name of ['dependent-1', 'dependent-2']) {
      await kube.core.createNamespacedConfigMap({
        namespace: ns,
        body: {
          metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid }] },
          data: { role: 'dependent' },
        },
      });
    }
    const unrelated = await kube.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'unrelated' } },
    });

    await kube.core.deleteNamespacedConfigMap({
      namespace: ns,
      name: 'owner',
      propagationPolicy: 'Background',
    });

    await eventually(
      'the dependents to be collected',
      async () => {
        const names = (await kube.core.listNamespacedConfigMap({ namespace: ns })).items.map(
          (c) => c.metadata?.name,
        );
        return !names.includes('dependent-1') && !names.includes('dependent-2');
      },
      60000,
    );
    const still = await kube.core.readNamespacedConfigMap({ namespace: ns, name: 'unrelated' });
    expect(still.metadata?.uid).toBe(unrelated.metadata?.uid);
  });

  it('foreground deletion removes the owner only after its dependents', async () => {
    const owner = await kube.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'fg-owner' } },
    });
    await kube.core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'fg-dependent',
          ownerReferences: [
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              name: 'fg-owner',
              uid: owner.metadata?.uid ?? '',
              blockOwnerDeletion: true,
            },
          ],
        },
      },
    });
    await kube.core.deleteNamespacedConfigMap({
      namespace: ns,
      name: 'fg-owner',
      propagationPolicy: 'Foreground',
    });
    await eventually(
      'owner and dependent to be gone',
      async () => {
        const names = (await kube.core.listNamespacedConfigMap({ namespace: ns })).items.map(
          (c) => c.metadata?.name,
        );
        return !names.includes('fg-owner') && !names.includes('fg-dependent');
      },
      60000,
    );
  });
});
