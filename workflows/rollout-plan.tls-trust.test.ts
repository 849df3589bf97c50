// The CA rotation guard as a table: a rollout onto CA bundles that do not trust the cluster's certificates waits with TLSTrustBroken.
import { Reasons } from '../crds/conditions';
import type { Desired, KubeMemberView, Observed } from './plan';
import { plan } from './plan';
import type { PodTemplateObservation, RolloutMemberView } from './rollout-plan';
import { planRollout } from './rollout-plan';

const id = (n: number) => `1027665774393297${5400 + n}`;
const name = (n: number) => `main-${n}`;
const current: PodTemplateObservation = { upToDate: true, changed: [], hash: 'h2', metadataCurrent: true };
const caChanged: PodTemplateObservation = {
  upToDate: false,
  changed: ['trusted CA bundle'],
  hash: 'h2',
  metadataCurrent: true,
};
const untrusted: PodTemplateObservation = {
  ...caChanged,
  untrusted: 'the peer ca.crt of Secret db/peer (new-ca) does not trust the peer certificate',
};

const member = (n: number, template: PodTemplateObservation): RolloutMemberView => ({
  id: id(n),
  name: name(n),
  ordinal: n,
  isLearner: false,
  healthy: true,
  ready: true,
  raftIndex: '5000',
  template,
});

describe('planRollout with a CA bundle that does not trust the certificates', () => {
  const cases: [string, PodTemplateObservation[], string][] = [
    [
      'no member is restarted onto an untrusting bundle',
      [untrusted, untrusted, untrusted],
      `Wait TLSTrustBroken ${untrusted.untrusted ?? ''}`,
    ],
    [
      'a rollout that already restarted a member holds the rest',
      [untrusted, current, untrusted],
      `Wait TLSTrustBroken ${untrusted.untrusted ?? ''}`,
    ],
    ['a trusted CA change rolls followers first', [caChanged, caChanged, caChanged], 'RolloutMember main-1'],
    ['nothing out of date: the verdict is not consulted', [current, current, current], 'none'],
  ];
  test.each(cases)('%s', (_title, templates, expected) => {
    const d = planRollout({ leaderId: id(0), members: templates.map((t, n) => member(n, t)) });
    const text =
      d === undefined
        ? 'none'
        : d.kind === 'Wait'
          ? `Wait ${d.reason} ${d.message}`
          : d.kind === 'RolloutMember'
            ? `RolloutMember ${d.member}`
            : d.kind;
    expect(text).toBe(expected);
  });

  test('metadata is still patched: a patch restarts nothing', () => {
    const d = planRollout({
      leaderId: id(0),
      members: [member(0, { ...untrusted, metadataCurrent: false }), member(1, untrusted)],
    });
    expect(d).toEqual({ kind: 'UpdateMemberMetadata', member: 'main-0' });
  });
});

describe('plan() with an untrusting CA bundle', () => {
  const desired: Desired = {
    cluster: 'main',
    replicas: 3,
    medium: '',
    versionKnown: true,
    version: '3.6.16',
    storageSize: '1Gi',
  };
  const observed = (templates: PodTemplateObservation[]): Observed => {
    const kube: KubeMemberView[] = templates.map((t, n) => ({
      name: name(n),
      pod: { phase: 'Running', ready: true, terminating: false, version: '3.6.16', template: t },
      claim: { terminating: false, dataLost: false },
    }));
    return {
      etcd: {
        clusterId: '1',
        leaderId: id(0),
        members: templates.map((_t, n) => ({
          id: id(n),
          name: name(n),
          isLearner: false,
          started: true,
          reachable: true,
          raftIndex: '5000',
          version: '3.6.16',
        })),
      },
      kube,
      recorded: { members: templates.map((_t, n) => name(n)), paused: false },
    };
  };

  test('the rollout check waits with TLSTrustBroken and the message that says what to do', () => {
    const d = plan(desired, observed([untrusted, untrusted, untrusted]));
    expect(d.check).toBe('rolloutMembers');
    expect(d.step).toEqual({ kind: 'Wait', reason: Reasons.TLSTrustBroken, message: untrusted.untrusted });
  });

  test('a scale down still goes ahead: it restarts nobody onto the bundle', () => {
    const d = plan({ ...desired, replicas: 2 }, observed([untrusted, untrusted, untrusted]));
    expect(d.step.kind).toBe('RemoveMember');
  });
});
