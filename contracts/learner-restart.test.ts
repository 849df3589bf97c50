// Which learner is restarted for waiting on its own publish, as a table: only a started learner that does not answer
// while its readiness checks pass, with a live Pod and a claim, and never twice for the same member id.
import type { ClusterObservation, EtcdMemberObservation, KubeMemberObservation } from './observation';
import { learnerToRestart } from './learner-restart';

const voter = (name: string, id: string): EtcdMemberObservation => ({
  id,
  name,
  isLearner: false,
  started: true,
  reachable: true,
});
const stuck = (over: Partial<EtcdMemberObservation> = {}): EtcdMemberObservation => ({
  id: '44',
  name: 'm-3',
  isLearner: true,
  started: true,
  reachable: false,
  awaitingOwnPublish: true,
  ...over,
});
const kubeOf = (name: string, over: Partial<KubeMemberObservation> = {}): KubeMemberObservation => ({
  name,
  pod: { phase: 'Running', ready: false, terminating: false, uid: `uid-${name}`, restartCount: 0 },
  claim: { terminating: false, dataLost: false },
  ...over,
});

function observation(
  learner: EtcdMemberObservation,
  kube: Partial<KubeMemberObservation> = {},
): ClusterObservation {
  return {
    etcd: {
      clusterId: '1',
      members: [voter('m-0', '11'), voter('m-1', '22'), voter('m-2', '33'), learner],
    },
    kube: [kubeOf('m-0'), kubeOf('m-1'), kubeOf('m-2'), kubeOf(learner.name, kube)],
    versionKnown: true,
  };
}

describe('learnerToRestart', () => {
  it('restarts a started learner that waits on its own publish, naming its Pod by uid', () => {
    expect(learnerToRestart(observation(stuck()))).toEqual({ member: 'm-3', id: '44', podUid: 'uid-m-3' });
  });

  it.each<[string, Partial<EtcdMemberObservation>, Partial<KubeMemberObservation>]>([
    ['its readiness checks do not pass (the snapshot is not applied yet)', { awaitingOwnPublish: false }, {}],
    ['it was not asked (it answers, or is not started)', { awaitingOwnPublish: undefined }, {}],
    ['it answers clients', { reachable: true }, {}],
    ['etcd lists no name for it yet', { started: false }, {}],
    ['it is a voter', { isLearner: false }, {}],
    [
      'it was restarted once already (its claim names this member id)',
      {},
      { claim: { terminating: false, dataLost: false, restartedLearner: '44' } },
    ],
    [
      'its Pod is being deleted',
      {},
      { pod: { phase: 'Running', ready: false, terminating: true, uid: 'u', restartCount: 0 } },
    ],
    ['it has no Pod', {}, { pod: undefined }],
    ['it has no claim (Memory medium: the data would go with the Pod)', {}, { claim: undefined }],
    ['its claim is going away', {}, { claim: { terminating: true, dataLost: false } }],
    ['its claim is marked data-lost', {}, { claim: { terminating: false, dataLost: true } }],
  ])('leaves it alone when %s', (_why, member, kube) => {
    expect(learnerToRestart(observation(stuck(member), kube))).toBeUndefined();
  });

  it('restarts a later learner of the same name: the record is per member id', () => {
    const later = observation(stuck({ id: '55' }), {
      claim: { terminating: false, dataLost: false, restartedLearner: '44' },
    });
    expect(learnerToRestart(later)).toEqual({ member: 'm-3', id: '55', podUid: 'uid-m-3' });
  });

  it('says nothing without an etcd view', () => {
    expect(learnerToRestart({ kube: [kubeOf('m-3')] })).toBeUndefined();
  });
});
