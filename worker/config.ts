// Reads the operator's settings from its environment, with the local stack's defaults.
import { DEFAULT_ETCD_REPOSITORY } from '../activities/etcd-images';
import { DEFAULT_AGENT_IMAGE } from '../activities/snapshot-manifests';

export type Role = 'worker' | 'watcher';

export interface OperatorConfig {
  roles: Role[];
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue?: string;
  kubeconfig?: string;
  watchNamespace?: string;
  etcdRepository: string;
  /** The project's image, run by snapshot Jobs and restore init containers. */
  agentImage: string;
}

export function configFromEnv(env: NodeJS.ProcessEnv): OperatorConfig {
  const roles = (env.OPERATOR_ROLES ?? 'worker,watcher')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  for (const r of roles) {
    if (r !== 'worker' && r !== 'watcher')
      throw new Error(`OPERATOR_ROLES: unknown role "${r}" (worker, watcher)`);
  }
  return {
    roles: roles as Role[],
    temporalAddress: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    temporalNamespace: env.TEMPORAL_NAMESPACE ?? 'default',
    ...(env.TEMPORAL_TASK_QUEUE ? { taskQueue: env.TEMPORAL_TASK_QUEUE } : {}),
    ...(env.KUBECONFIG ? { kubeconfig: env.KUBECONFIG.split(':')[0] } : {}),
    ...(env.WATCH_NAMESPACE ? { watchNamespace: env.WATCH_NAMESPACE } : {}),
    etcdRepository: env.ETCD_IMAGE_REPOSITORY ?? DEFAULT_ETCD_REPOSITORY,
    agentImage: env.AGENT_IMAGE ?? DEFAULT_AGENT_IMAGE,
  };
}
