// The local apiserver runs the default admission chain and CRD CEL validation like a real cluster.
import { apiMessage, connect, createNamespace, deleteNamespace, eventually, type Kube } from './kube';

const GROUP = 'e2e.etcd-conductor.local';
const PLURAL = 'widgets';
const CRD_NAME = `${PLURAL}.${GROUP}`;

describe('CustomResourceDefinition with a CEL rule', () => {
  let kube: Kube;
  let ns: string;
  beforeAll(async () => {
    kube = connect();
    ns = await createNamespace(kube, 'crd-cel');
    await kube.ext.deleteCustomResourceDefinition({ name: CRD_NAME }).catch(() => undefined);
    await eventually(
      'an old test CRD to be gone',
      async () =>
        !(await kube.ext.readCustomResourceDefinition({ name: CRD_NAME }).then(
          () => true,
          () => false,
        )),
      30000,
    );
    await kube.ext.createCustomResourceDefinition({
      body: {
        metadata: { name: CRD_NAME },
        spec: {
          group: GROUP,
          scope: 'Namespaced',
          names: { plural: PLURAL, singular: 'widget', kind: 'Widget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: {
                      type: 'object',
                      properties: { replicas: { type: 'integer' } },
                      x_kubernetes_validations: [
                        { rule: 'self.replicas % 2 == 1', message: 'replicas must be odd' },
                      ],
                    },
                  },
                },
              },
            },
          ],
        },
      },
    });
    await eventually(
      'the CRD to be Established',
      async () => {
        const crd = await kube.ext.readCustomResourceDefinition({ name: CRD_NAME });
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
      },
      30000,
    );
  });
  afterAll(async () => {
    await kube.ext.deleteCustomResourceDefinition({ name: CRD_NAME }).catch(() => undefined);
    await deleteNamespace(kube, ns);
  });

  const create = (name: string, replicas: number) =>
    kube.custom.createNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: ns,
      plural: PLURAL,
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name }, spec: { replicas } },
    });

  it('accepts an object that satisfies the rule', async () => {
    // A just-Established CRD can take a moment before its REST endpoint serves; retry until it does.
    await eventually('the valid Widget to be created', async () => (await create('good', 3), true), 20000);
    const got = (await kube.custom.getNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: ns,
      plural: PLURAL,
      name: 'good',
    })) as { spec: { replicas: number } };
    expect(got.spec.replicas).toBe(3);
  });

  it("rejects an object that breaks the rule, with the rule's message", async () => {
    const err = await create('bad', 4).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeDefined();
    expect((err as { code?: number }).code).toBe(422);
    expect(apiMessage(err)).toContain('replicas must be odd');
  });
});
