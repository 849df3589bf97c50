// Turns a spec and an observation into the planner's inputs; what the workflow remembers between observations.
import type { ClusterObservation } from '../contracts/observation';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { defragConfigOf } from './defrag-plan';
import type { Desired, Observed } from './plan';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { ClusterChange } from '../contracts/messages';
import { sameData } from './canonical';

export function desiredOf(
  ref: Pick<ClusterRef, 'name'>,
  spec: EtcdClusterSpec,
  versionKnown: boolean,
): Desired {
  return {
    cluster: ref.name,
    replicas: spec.replicas,
    medium: spec.storage.medium,
    versionKnown,
    version: spec.version,
    storageSize: String(spec.storage.size),
    ...(spec.auth ? { auth: true } : {}),
    ...(spec.bootstrap?.restore ? { restore: true } : {}),
    defrag: defragConfigOf(spec),
  };
}

/**
 * What to remember after an observation: the cluster id and member names whenever etcd answered (so a
 * later observation in which etcd does not answer can still tell "never created" from "lost"). Whether
 * the cluster is paused is the operation's outcome, not an observation, so it is kept as it was.
 */
export function recordedAfter(
  recorded: Observed['recorded'],
  observation: ClusterObservation,
): Observed['recorded'] {
  if (!observation.etcd) return recorded;
  return {
    ...recorded,
    clusterId: observation.etcd.clusterId,
    members: observation.etcd.members.map((m) => m.name).sort(),
  };
}

/**
 * The look a scale-down takes its next removal from without reading the cluster again: `look` as it was, less the
 * member etcd just removed (its Pod and claim going, as the removal's deferred clean-up makes them). Only a removal
 * is ever taken from it (`takenFromLookAfterRemoval`); anything else the plan says there is looked at afresh.
 */
export function lookAfterRemoval(
  look: ClusterObservation,
  removed: { member: string; id: string },
): ClusterObservation {
  const going = (k: ClusterObservation['kube'][number]): ClusterObservation['kube'][number] => ({
    ...k,
    ...(k.pod ? { pod: { ...k.pod, terminating: true } } : {}),
    ...(k.claim ? { claim: { ...k.claim, terminating: true } } : {}),
  });
  return {
    ...look,
    ...(look.etcd
      ? { etcd: { ...look.etcd, members: look.etcd.members.filter((m) => m.id !== removed.id) } }
      : {}),
    kube: look.kube.map((k) => (k.name === removed.member ? going(k) : k)),
  };
}

/**
 * Whether a step planned on `lookAfterRemoval` is taken. After a removal that more follow: only another scale-down
 * removal, which etcd refuses itself if it would cost quorum (strict reconfiguration checks). After a scale-down's
 * last removal: only the end (None), so the operation ends on what etcd answered to the removal, and the cluster
 * workflow's fresh look right after the end says the rest. A wait or a move of leadership is decided on a fresh look.
 */
export function takenFromLookAfterRemoval(
  step: { kind: string; reason?: string },
  after: 'removalThatMoreFollow' | 'lastRemoval' = 'removalThatMoreFollow',
): boolean {
  if (after === 'lastRemoval') return step.kind === 'None';
  return step.kind === 'RemoveMember' && step.reason === 'ScaleDown';
}

/**
 * Whether a look taken for `before` is the look `after` would take, so that `after` may be planned on it: the change
 * is spec.replicas alone, on the same object with the same annotations. A look reads the version, the Pod template,
 * TLS and storage from the spec, never the member count. A pause or resume (replicas 0) is not: the loss of quorum is
 * judged differently for a paused cluster.
 */
export function lookServesChange(before: ClusterChange, after: ClusterChange): boolean {
  if (before.deleted || after.deleted || before.uid !== after.uid) return false;
  if (before.spec.replicas === 0 || after.spec.replicas === 0) return false;
  const { spec: a, generation: _a, ...restA } = before;
  const { spec: b, generation: _b, ...restB } = after;
  const { replicas: _ra, ...specA } = a;
  const { replicas: _rb, ...specB } = b;
  return sameData(restA, restB) && sameData(specA, specB);
}
