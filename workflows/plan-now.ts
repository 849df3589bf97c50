// plan() as the workflows call it: the decision rules that changed after histories were recorded are switched on
// here, each behind its patch, so a running workflow replays the decisions it made before.
import { patched } from '@temporalio/workflow';
import { quorumEvidence } from './cluster-state';
import type { Decision, Desired, Observed } from './plan';
import { plan } from './plan';

/** Quorum shown only by etcd's linearizable member list is not QuorumLost (cluster-state.ts quorumEvidence). */
export const QUORUM_BY_MEMBER_LIST_PATCH = 'quorum-by-member-list';

/** The next step, with every rule this code knows that the history allows. */
export function planNow(desired: Desired, observed: Observed): Decision {
  // Asked only when the rule decides differently, so histories that never met the case record no marker.
  const slowVoters = quorumEvidence(observed.etcd, observed.kube).proof === 'memberList';
  if (slowVoters && patched(QUORUM_BY_MEMBER_LIST_PATCH))
    return plan({ ...desired, quorumByMemberList: true }, observed);
  return plan(desired, observed);
}
