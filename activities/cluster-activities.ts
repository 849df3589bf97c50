// The cluster's activities, one idempotent external effect each, composed from the files that own them by what they
// touch: Kubernetes objects (cluster-kube.ts), etcd's membership (etcd-membership.ts), reading the cluster
// (cluster-observation.ts), and the upgrade, rollout, defrag and learner-restart steps. The names registered with the worker are
// the keys of what createActivities returns: running workflows call activities by these names, so they stay.
import type { EtcdClusterStatus } from '../crds/etcd-cluster';
import type { EtcdAdmin } from './etcd-admin';
import type { KubeObjects } from './kube-objects';
import type { EventRecorder } from './event-recorder';
import { createUpgradeActivities } from './upgrade-activities';
import { createRolloutActivities } from './rollout-activities';
import { createDefragActivities } from './defrag-activities';
import { createClusterKubeActivities, eventTellingKube } from './cluster-kube';
import { createObservationActivities } from './cluster-observation';
import { createMembershipActivities } from './etcd-membership';
import { createQuorumRecoveryActivities } from './quorum-recovery';
import { createLearnerRestartActivities } from './learner-restart';

export interface ActivityDeps {
  kube: KubeObjects;
  etcd: EtcdAdmin;
  events: EventRecorder;
  /** The operator's image for an etcd version (spec.image overrides it: memberImage), or undefined when none is known. */
  imageFor: (version: string) => string | undefined;
  /** Metrics hook: the status on the apiserver before a write and the status written (worker/operator-metrics.ts). */
  onStatusWritten?: (before: EtcdClusterStatus | undefined, after: EtcdClusterStatus) => void;
  /** A learner's readiness checks at its Pod's address (activities/member-readiness.ts by default; tests fake it). */
  learnerReadiness?: (podIP: string, timeoutMs: number) => Promise<boolean>;
}

export function createActivities(deps: ActivityDeps) {
  const kube = eventTellingKube(deps);
  const withKube = { ...deps, kube };
  return {
    ...createUpgradeActivities({ kube: deps.kube }),
    ...createRolloutActivities({ kube: deps.kube }),
    ...createDefragActivities({ etcd: deps.etcd }),
    ...createObservationActivities(withKube),
    ...createClusterKubeActivities(withKube),
    ...createMembershipActivities(withKube),
    ...createQuorumRecoveryActivities(withKube),
    ...createLearnerRestartActivities(withKube),
  };
}

export type ClusterActivities = ReturnType<typeof createActivities>;
