// Running workflows call activities by name: the names the cluster activities register stay what they were
// when activities/cluster-activities.ts was split by what each touches (kube, etcd membership, observation).
import type { ActivityDeps } from './cluster-activities';
import { createActivities } from './cluster-activities';

test('the cluster activities register the same names', () => {
  const deps = { kube: {}, etcd: {}, events: {}, imageFor: () => undefined } as unknown as ActivityDeps;
  expect(Object.keys(createActivities(deps)).sort()).toEqual([
    'addLearner',
    'awaitAnswerChange',
    'awaitSoleMember',
    'clusterAvailable',
    'clusterGoingAway',
    'compactToCurrentRevision',
    'createMemberClaim',
    'createMemberPod',
    'createPreUpgradeSnapshot',
    'defragmentMember',
    'deleteMemberClaim',
    'deleteMemberPod',
    'deleteMemberPodForRollout',
    'deleteMemberPodForUpgrade',
    'disarmNoSpace',
    'ensureClusterObjects',
    'expandMemberClaim',
    'forcedMembers',
    'issueAutoTLS',
    'moveLeader',
    'observeCluster',
    'patchMemberPodMetadata',
    'probeQuorumLoss',
    'promoteLearner',
    'readPreUpgradeSnapshot',
    'recordEvent',
    'removeMember',
    'removeRecoveryApproval',
    'replaceMemberPod',
    'stageIssuedTLS',
    'stopLearnerPod',
    'writeStatus',
  ]);
});
