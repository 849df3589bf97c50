// How the cluster workflow turns an observation and a decision into status: computed by conditions.ts, written
// only when it changed, and a member problem told once as an Event.
import { patched } from '@temporalio/workflow';
import { BACKUP_CONDITION, Reasons } from '../crds/conditions';
import { clusterSelector } from '../crds/labels';
import type { EtcdClusterStatus, TLSStatus } from '../crds/etcd-cluster';
import { autoClientSecretName, autoTLSOn, clientEndpointFor } from '../crds/tls-names';
import type { EventReason } from '../contracts/event-reasons';
import type { ClusterObservation } from '../contracts/observation';
import type { ClusterRunState } from './cluster-run-state';
import { clusterActs as acts, isHalted } from './cluster-run-state';
import { computeStatus, setCondition, statusChanged, withoutSmallSizeMoves } from './conditions';
import { desiredOf } from './observation';
import type { Decision, Observed } from './plan';
import { planNow } from './plan-now';

/** Notices told once as an Event: a member Pod that cannot run, an unsupported version. */
const TOLD_ONCE = [
  Reasons.ImagePullFailed,
  Reasons.MemberCrashLooping,
  Reasons.PodUnschedulable,
  Reasons.ClaimPending,
  Reasons.UnsupportedVersion,
] as const satisfies readonly EventReason[];
const toldOnce = (reason: string): reason is (typeof TOLD_ONCE)[number] =>
  (TOLD_ONCE as readonly string[]).includes(reason);
/** How many told notices are remembered (oldest forgotten first). */
const TOLD_KEPT = 32;
/** The patch behind telling member problems and unsupported versions as Events. */
const TELL_PROBLEMS_PATCH = 'tell-member-problems';
/** The patch behind each member's raft lag and last error in status (a run from before wrote status without them). */
const MEMBER_DETAIL_PATCH = 'member-lag-and-error';
/** The patch behind status.restore (a run from before never wrote it). */
const RESTORE_STATUS_PATCH = 'status-restore';
/**
 * The patch behind not writing status for members' database sizes that moved by less than DB_SIZE_NEWS_BYTES alone:
 * the idle fleet's drift checks wrote 4 statuses in 11 minutes over 20 clusters for an in-use size moving by 4 KiB.
 */
const SIZE_MOVES_QUIET_PATCH = 'db-size-moves-quiet';

/** Writes the status this observation and decision give, when it differs from the last one written. */
export async function publish(
  s: ClusterRunState,
  observed: Observed,
  decision: Decision,
  versionKnown: boolean,
): Promise<void> {
  const { ref, desired } = s;
  const next = computeStatus({
    generation: desired.generation,
    desired: desiredOf(ref, desired.spec, versionKnown),
    observed,
    decision,
    ...(s.current ? { currentOperation: s.current } : {}),
    ...(s.lastOperation ? { lastOperation: s.lastOperation } : {}),
    halted: isHalted(s),
    selector: clusterSelector(ref.name),
    clientEndpoint: clientEndpointFor(desired.spec, ref),
    ...(s.status ? { previous: s.status } : {}),
    now: new Date().toISOString(),
    memberDetail: patched(MEMBER_DETAIL_PATCH),
  });
  const tls = autoTLSStatus(s);
  if (tls) next.tls = tls;
  withBackup(s, next);
  withRestore(s, next, observed);
  const step = decision.step;
  if (step.kind === 'Wait' && toldOnce(step.reason)) {
    // Told once per reason and subject (the message up to its first ': ', e.g. `claim data-main-0 is Pending`,
    // `Pod main-0 cannot pull image "x"`): the kubelet's changing detail after it is no news.
    const notice = `${step.reason}|${step.message.split(': ')[0] ?? ''}`;
    if (!s.told.includes(notice) && patched(TELL_PROBLEMS_PATCH)) {
      s.told = [...s.told, notice].slice(-TOLD_KEPT);
      await acts.recordEvent({ ref, type: 'Warning', reason: step.reason, message: step.message });
    }
  }
  if (!statusChanged(s.status, next)) return;
  // Asked only when it decides something, so histories that never met a small size move record no marker.
  if (!statusChanged(s.status, withoutSmallSizeMoves(s.status, next)) && patched(SIZE_MOVES_QUIET_PATCH))
    return;
  if ((await acts.writeStatus({ ref, status: next })) === 'cluster-gone') {
    s.deleted = true;
    return;
  }
  s.status = next;
}

/**
 * status.backup and the ContinuousBackup condition: this run's last look at the backup, else what status said (a
 * status write before this run's first look must not drop them; computeStatus keeps the earlier conditions). When
 * the backup was turned off both go. Clusters that never had the backup get neither.
 */
function withBackup(s: ClusterRunState, next: EtcdClusterStatus): void {
  const outcome = s.backup?.outcome;
  if (outcome && !outcome.backup) {
    next.conditions = (next.conditions ?? []).filter((c) => c.type !== BACKUP_CONDITION);
    return;
  }
  const backup = outcome ? outcome.backup : s.status?.backup;
  if (backup) next.backup = backup;
  if (outcome?.condition)
    next.conditions = setCondition(next.conditions, outcome.condition, new Date().toISOString());
}

/**
 * status.restore: once written it stays (a restarted seed's restore finds its data and reports nothing); before that,
 * what the seed's restore init container reported when it succeeded.
 */
function withRestore(s: ClusterRunState, next: EtcdClusterStatus, observed: Observed): void {
  if (s.status?.restore) {
    next.restore = s.status.restore;
    return;
  }
  if (!s.desired.spec.bootstrap?.restore) return;
  const reached = observed.kube.find((k) => k.pod?.restored)?.pod?.restored;
  if (reached && patched(RESTORE_STATUS_PATCH)) next.restore = { ...reached };
}

/** status.tls of a cluster with spec.tls.mode Auto: this run's last issue, or what status said before it asked. */
function autoTLSStatus(s: ClusterRunState): TLSStatus | undefined {
  if (!autoTLSOn(s.desired.spec)) return undefined;
  if (!s.autoTLS) return s.status?.tls;
  const { caNotAfter, certificatesNotAfter, renewalTime } = s.autoTLS;
  return {
    clientSecretName: autoClientSecretName(s.ref.name),
    caNotAfter,
    certificatesNotAfter,
    renewalTime,
  };
}

/** Recomputes status (members, versions, conditions) from a fresh observation while an operation runs. */
export async function refreshMembers(s: ClusterRunState): Promise<void> {
  const { ref } = s;
  // With the spec, so members keep their upToDate verdict (a status without it would be written twice).
  const spec = s.desired.spec;
  await publishLook(s, await acts.observeCluster({ ref, version: spec.version, spec }));
}

/**
 * Status from one observation taken with the spec (members, versions, conditions), planned against the newest
 * spec (a change may have arrived while the observation ran). Auth and the loss facts are a full look's business.
 */
export async function publishLook(s: ClusterRunState, observation: ClusterObservation): Promise<void> {
  const observed: Observed = { kube: observation.kube, recorded: s.recorded };
  if (observation.etcd) observed.etcd = observation.etcd;
  await publish(
    s,
    observed,
    planNow(desiredOf(s.ref, s.desired.spec, observation.versionKnown), observed),
    observation.versionKnown,
  );
}
