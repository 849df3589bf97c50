// Cancelling an Upgrade mid-way (temporal workflow cancel) leaves a working mixed-version cluster, and status and lastOperation say which member runs which version.
import type { KubernetesObject } from '@kubernetes/client-node';
import { KubernetesObjectApi } from '@kubernetes/client-node';
import { UPGRADE_FROM, UPGRADE_TO } from '../../bench/upgrade';
import { Labels } from '../../crds/labels';
import type { Harness } from '../support/cluster-harness';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import { startWriterRunning } from '../support/writer';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
  readKeys,
  temporalCli,
  writeKeys,
} from '../support/cluster-harness';
import { waitConverged } from '../support/cluster-harness';

jest.setTimeout(900_000);

let h: Harness;
beforeAll(() => {
  h = connect();
});

/**
 * Refuses the creation of the namespace's member Pods (those with the member label) until released: the
 * Upgrade deletes its first member's Pod and then cannot start it again, a known point to cancel at.
 */
async function holdMemberPodCreation(ns: string): Promise<() => Promise<void>> {
  const objects = KubernetesObjectApi.makeApiClient(h.kc);
  const name = `hold-member-create-${ns}`;
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] },
        ],
        objectSelector: { matchExpressions: [{ key: Labels.member, operator: 'Exists' }] },
      },
      validations: [{ expression: 'false', message: `held by the cancel test (${ns})` }],
    },
  };
  const binding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: {
      policyName: name,
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
    },
  };
  await objects.create(policy as KubernetesObject);
  await objects.create(binding as KubernetesObject);
  // Enforced once a dry-run create of a member-labelled Pod is refused with the hold's message.
  await eventually('the member Pod hold is enforced', async () => {
    const refused = await h.core
      .createNamespacedPod({
        namespace: ns,
        dryRun: 'All',
        body: {
          metadata: { name: 'probe', labels: { [Labels.member]: 'probe' } },
          spec: { containers: [{ name: 'c', image: 'probe' }] },
        },
      })
      .then(
        () => false,
        (err: unknown) => String((err as { body?: unknown }).body ?? err).includes('held by the cancel test'),
      );
    return refused ? true : undefined;
  });
  return async () => {
    await objects.delete(binding as KubernetesObject).catch(() => undefined);
    await objects.delete(policy as KubernetesObject).catch(() => undefined);
  };
}

test(`an Upgrade ${UPGRADE_FROM} -> ${UPGRADE_TO} cancelled after its first member leaves a working mixed cluster, and says who runs what`, async () => {
  const ns = await freshNamespace(h, 'upgrade-cancel');
  const name = 'mix';
  await createCluster(h, ns, name, { replicas: 3, version: UPGRADE_FROM });
  const before = await waitConverged(h, ns, name, 3, 300_000);
  const leader = before.status?.members?.find((m) => m.leader)?.name;
  const firstFollower = [`${name}-0`, `${name}-1`, `${name}-2`].find((m) => m !== leader) ?? '';
  const written = await writeKeys(ns, name, '/mix', 20);
  // One member down (held) for the whole stuck step: two of three keep writing.
  const writer = await startWriterRunning({ namespace: ns, name, prefix: '/mix-writes' });

  const release = await holdMemberPodCreation(ns);
  try {
    await patchSpec(h, ns, name, { version: UPGRADE_TO });
    // The first follower's Pod is deleted and cannot come back: the Upgrade is stuck at a known point.
    const running = await eventually(
      'the Upgrade deleted its first member Pod',
      async () => {
        const c = await getCluster(h, ns, name);
        const pods = (await h.core.listNamespacedPod({ namespace: ns })).items.map((p) => p.metadata?.name);
        return c.status?.currentOperation?.type === 'Upgrade' && !pods.includes(firstFollower)
          ? c
          : undefined;
      },
      300_000,
    );
    const workflowId = running.status?.currentOperation?.workflowId ?? '';
    temporalCli(h, ['workflow', 'cancel', '--workflow-id', workflowId]);
  } finally {
    // The halt starts the stopped member again (on the new image) before the operation ends.
    await release();
  }

  const halted = await eventually(
    'the Upgrade ended Cancelled',
    async () => {
      const c = await getCluster(h, ns, name);
      return c.status?.lastOperation?.type === 'Upgrade' && !c.status.currentOperation ? c : undefined;
    },
    300_000,
  );
  expect(halted.status?.lastOperation?.result).toBe('Cancelled');
  const expected = [`${name}-0`, `${name}-1`, `${name}-2`]
    .map((m) => `${m} ${m === firstFollower ? UPGRADE_TO : UPGRADE_FROM}`)
    .join(', ');
  expect(halted.status?.lastOperation?.message).toContain(`members run: ${expected}`);

  // A working mixed cluster: all three members Ready, status naming each one's version, every key readable.
  const mixed = await eventually(
    'status shows three Ready members on mixed versions',
    async () => {
      const c = await getCluster(h, ns, name);
      const ms = c.status?.members ?? [];
      return ms.length === 3 && ms.every((m) => m.ready && m.version) ? c : undefined;
    },
    300_000,
  );
  expect(Object.fromEntries((mixed.status?.members ?? []).map((m) => [m.name, m.version]))).toEqual({
    [`${name}-0`]: firstFollower === `${name}-0` ? UPGRADE_TO : UPGRADE_FROM,
    [`${name}-1`]: firstFollower === `${name}-1` ? UPGRADE_TO : UPGRADE_FROM,
    [`${name}-2`]: firstFollower === `${name}-2` ? UPGRADE_TO : UPGRADE_FROM,
  });
  expect(mixed.status?.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('OperationCancelled');
  expect(mixed.status?.conditions?.find((c) => c.type === 'Available')?.status).toBe('True');
  await expectAvailability(h, await writer.stop(), {
    what: 'upgrade cancelled after its first member',
    boundMs: PLANNED_GAP_BOUND_MS,
    members: [`${name}-0`, `${name}-1`, `${name}-2`],
  });
  const read = await readKeys(ns, name, '/mix');
  expect([...written].filter(([k, v]) => read.get(k) !== v)).toEqual([]);
  await writeKeys(ns, name, '/mix-after', 5);
});
