// Pods of shell steps for the kubelet journeys: the project's image, built here and imported into the real nodes, runs
// `sh` and `node`.
import type { V1Container, V1ContainerStatus, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { PROJECT_IMAGE as BUILT_PROJECT_IMAGE } from '../../localcluster/project-image';
import { eventually, type Kube } from './kube';

/** The reference `npm run images` builds and imports into real nodes. */
export const PROJECT_IMAGE = BUILT_PROJECT_IMAGE;

/** Where the Pod's emptyDir is mounted in each container. */
export const SHARED = '/srv';

/** A container running one shell script, with the Pod's emptyDir at SHARED. */
export function shell(name: string, script: string, extra: Partial<V1Container> = {}): V1Container {
  return {
    name,
    image: PROJECT_IMAGE,
    command: ['sh', '-c', script],
    volumeMounts: [{ name: 'shared', mountPath: SHARED }],
    ...extra,
  };
}

export function shellPod(
  name: string,
  spec: Pick<V1PodSpec, 'containers' | 'initContainers' | 'restartPolicy'>,
): V1Pod {
  return {
    metadata: { name },
    spec: { terminationGracePeriodSeconds: 1, volumes: [{ name: 'shared', emptyDir: {} }], ...spec },
  };
}

export async function podWhere(
  kube: Kube,
  namespace: string,
  name: string,
  what: string,
  check: (pod: V1Pod) => boolean,
  timeoutMs = 60000,
): Promise<V1Pod> {
  let pod: V1Pod | undefined;
  await eventually(
    `Pod ${namespace}/${name}: ${what}`,
    async () => check((pod = await kube.core.readNamespacedPod({ namespace, name }))),
    timeoutMs,
  );
  return pod as V1Pod;
}

export function containerStatus(pod: V1Pod, name: string): V1ContainerStatus | undefined {
  return [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].find(
    (s) => s.name === name,
  );
}
