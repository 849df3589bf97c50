// Holds a window open in an end-to-end test: a ValidatingAdmissionPolicy refuses an operation on a namespace's Pods until released.
import type { KubernetesObject } from '@kubernetes/client-node';
import { KubernetesObjectApi } from '@kubernetes/client-node';
import type { Harness } from './cluster-harness';
import { eventually } from './cluster-harness';

export interface PodHold {
  release(): Promise<void>;
}

/**
 * Refuses `operation` on the namespace's Pods (message "held by <holder> (<operation>)") and returns once the
 * apiserver enforces it: `probe` (a server-side dry run of that operation) is refused with that message.
 */
export async function holdPods(
  h: Harness,
  ns: string,
  operation: 'CREATE' | 'DELETE',
  holder: string,
  probe: () => Promise<unknown>,
  /** Pods of these names pass (the probe must name another). */
  allow: string[] = [],
): Promise<PodHold> {
  const objects = KubernetesObjectApi.makeApiClient(h.kc);
  const name = `hold-${operation.toLowerCase()}-${ns}`;
  const message = `held by ${holder} (${operation})`;
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: [operation], resources: ['pods'] },
        ],
      },
      validations: [
        {
          expression: allow.length === 0 ? 'false' : `object.metadata.name in ${JSON.stringify(allow)}`,
          message,
        },
      ],
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
  await eventually(`the ${operation} hold is enforced`, async () => {
    const refused = await probe().then(
      () => false,
      (err: unknown) => String((err as { body?: unknown }).body ?? err).includes(message),
    );
    return refused ? true : undefined;
  });
  return {
    async release() {
      await objects.delete(binding as KubernetesObject).catch(() => undefined);
      await objects.delete(policy as KubernetesObject).catch(() => undefined);
    },
  };
}

/** A hold on Pod creation (but of the Pods named in `allow`), probed with a server-side dry run of a Pod create. */
export function holdPodCreation(
  h: Harness,
  ns: string,
  holder: string,
  allow: string[] = [],
): Promise<PodHold> {
  return holdPods(
    h,
    ns,
    'CREATE',
    holder,
    () =>
      h.core.createNamespacedPod({
        namespace: ns,
        dryRun: 'All',
        body: { metadata: { name: 'probe' }, spec: { containers: [{ name: 'c', image: 'probe' }] } },
      }),
    allow,
  );
}
