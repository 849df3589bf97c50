// The cluster workflow's part in a permanent quorum loss (workflows/quorum-loss.ts decides): ask the survivors and
// find the newest backup for status, tell the loss and a refused approval once as Events, and remove an approval
// given while the cluster answers (it would approve a later loss nobody has seen).
import { patched } from '@temporalio/workflow';
import type { EventReason } from '../contracts/event-reasons';
import type { LossFindings } from '../contracts/quorum-loss';
import { Reasons } from '../crds/conditions';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { Annotations } from '../crds/labels';
import type { ClusterRunState } from './cluster-run-state';
import { clusterActs as acts } from './cluster-run-state';
import { podLive } from './cluster-state';
import { desiredOf } from './observation';
import type { Observed, Step } from './plan';
import { lossWithoutSurvivor, PERMANENT_QUORUM_LOSS_PATCH, permanentLoss } from './plan-now';
import { judgeApproval, judgeQuorumLoss, withEarlierAnswers } from './quorum-loss';

/**
 * On a quorum lost for good whose survivors all run (plan-without-etcd.ts permanentQuorumLoss): asks each survivor
 * about itself and finds the newest snapshot, so status can say what a recovery would start from. With no survivor,
 * finds the backup point a rebuild would start from (rebuild-point.ts). Nothing else.
 */
export async function findLossFacts(
  s: ClusterRunState,
  spec: EtcdClusterSpec,
  observed: Observed,
  versionKnown: boolean,
): Promise<void> {
  const desired = desiredOf(s.ref, spec, versionKnown);
  const verdict = judgeQuorumLoss(desired, observed);
  if (verdict.kind !== 'Permanent') return;
  if (verdict.survivors.length === 0) {
    // Nobody to ask: only the backup, the newest snapshot and the continuous backup's newest safe point.
    if (!lossWithoutSurvivor(desired, observed)) return;
    const found = await acts.probeQuorumLoss({ ref: s.ref, survivors: [] });
    const safe = spec.backup?.continuous ? (s.backup?.outcome?.backup ?? s.status?.backup) : undefined;
    const continuous =
      safe?.latestRevision !== undefined
        ? { revision: safe.latestRevision, ...(safe.latestTime ? { time: safe.latestTime } : {}) }
        : undefined;
    observed.lossFindings = remember(s, { ...found, ...(continuous ? { continuous } : {}) });
    return;
  }
  const kube = new Map(observed.kube.map((k) => [k.name, k]));
  if (verdict.survivors.some((n) => !podLive(kube.get(n)))) return;
  if (!permanentLoss(desired, observed)) return;
  observed.lossFindings = remember(
    s,
    await acts.probeQuorumLoss({ ref: s.ref, survivors: verdict.survivors }),
  );
}

/**
 * Behind it, a look's findings fill their gaps from the last look's: a survivor's earlier answer can then make an
 * approved recovery wait where a history recorded before went on.
 */
export const LOSS_FINDINGS_KEPT_PATCH = 'loss-findings-kept';

/** This look's findings, gaps filled from the last look's (quorum-loss.ts withEarlierAnswers), kept for the next. */
function remember(s: ClusterRunState, found: LossFindings): LossFindings {
  if (!patched(LOSS_FINDINGS_KEPT_PATCH)) return found;
  s.lossFindings = withEarlierAnswers(found, s.lossFindings);
  return s.lossFindings;
}

/** A permanent quorum loss is told once per set of members lost; an approval that is refused, once per value. */
export async function tellQuorumLoss(s: ClusterRunState, step: Step): Promise<void> {
  if (step.kind !== 'Wait' || step.reason !== Reasons.PermanentQuorumLoss) return;
  const tell = async (notice: string, reason: EventReason, message: string) => {
    if (s.told.includes(notice)) return;
    s.told = [...s.told, notice].slice(-32);
    await acts.recordEvent({ ref: s.ref, type: 'Warning', reason, message });
  };
  await tell(
    `${Reasons.PermanentQuorumLoss}|${step.message.split(': ')[0] ?? ''}`,
    'PermanentQuorumLoss',
    step.message,
  );
  const approval = judgeApproval(s.desired.recoveryApproval, s.ref.uid);
  if (approval.kind === 'Refused') {
    await tell(`RecoveryRefused|${approval.value}`, 'RecoveryRefused', approval.message);
  }
}

/**
 * An approval given while etcd answers approves nothing now, and left in place it would approve a loss nobody has
 * seen yet: it is removed and said so. (One given while the quorum is lost, before the loss is judged permanent,
 * stays: the user gave it for this loss.)
 */
export async function dropStaleApproval(s: ClusterRunState, observed: Observed): Promise<void> {
  const value = s.desired.recoveryApproval;
  if (value === undefined || !observed.etcd || !patched(PERMANENT_QUORUM_LOSS_PATCH)) return;
  const removed = await acts.removeRecoveryApproval({ ref: s.ref });
  // The watcher tells the removal too; until then this run does not remove it again.
  const { recoveryApproval: _removed, ...rest } = s.desired;
  s.desired = rest;
  // Already gone (the Recover that used it removed it, and the watcher has not told yet): nothing to say.
  if (removed === 'absent') return;
  await acts.recordEvent({
    ref: s.ref,
    type: 'Warning',
    reason: 'RecoveryRefused',
    message: `${Annotations.approveRecovery}="${value}" removed: the cluster answers, so there is no permanent quorum loss to approve; an approval is taken only while status says PermanentQuorumLoss`,
  });
}
