// Pods of shell steps for the kubelet journeys: the project's image runs `sh` and `node` (on real nodes from the image
// built here, on process-backed nodes from this machine).
import type { V1Container, V1ContainerStatus, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { PROJECT_IMAGE as BUILT_PROJECT_IMAGE } from '../../localcluster/project-image';
import { eventually, type Kube } from './kube';

/** The reference `npm run images` builds and imports into real nodes; process-backed nodes map any of its tags. */
export const PROJECT_IMAGE = BUILT_PROJECT_IMAGE;

/**
 * Where the Pod's emptyDir is mounted: a folder every (Debian) host has, because the node creates missing mount
 * points on the host (see docs/local-cluster.md) and a journey should leave nothing behind. Not /tmp: a checkout
 * under /tmp (CI clones to /tmp/ci-clone) keeps its node state there, and a volume hiding the node's own folder
 * leaves the termination-message file impossible to set up, so every container would exit 128.
 */
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
