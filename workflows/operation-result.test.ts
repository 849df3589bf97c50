// The message an operation ends with: a standing storage refusal is the Rollout's news, never a Downgrade's or a ScaleUp's.
import { Reasons } from '../crds/conditions';
import type { OperationType } from '../crds/etcd-cluster';
import { operationResultMessage } from './operation-result';
import type { Step } from './plan-types';

const refused: Extract<Step, { kind: 'None' }> = {
  kind: 'None',
  reason: Reasons.StorageExpansionRefused,
  message: 'spec.storage.size 2Gi is not applied: data-main-0 (1Gi) has no StorageClass',
  converged: '3 of 3 members healthy',
};
const converged: Extract<Step, { kind: 'None' }> = {
  kind: 'None',
  reason: Reasons.Converged,
  message: '3 of 3 members healthy',
};

describe('operationResultMessage', () => {
  test.each<[string, OperationType, Extract<Step, { kind: 'None' }>, string | undefined, string]>([
    [
      'a Downgrade does not repeat a storage refusal',
      'Downgrade',
      refused,
      undefined,
      '3 of 3 members healthy',
    ],
    [
      'a Downgrade names its snapshot, not the refusal',
      'Downgrade',
      refused,
      's3://b/pre.db',
      '3 of 3 members healthy; pre-upgrade snapshot s3://b/pre.db',
    ],
    ['an Upgrade does not either', 'Upgrade', refused, undefined, '3 of 3 members healthy'],
    ['nor a ScaleUp', 'ScaleUp', refused, undefined, '3 of 3 members healthy'],
    [
      'a Rollout reports the refusal: storage is its business',
      'Rollout',
      refused,
      undefined,
      refused.message,
    ],
    [
      'a refusal without the converged text (an older plan) says done',
      'Heal',
      { ...refused, converged: undefined },
      undefined,
      'done',
    ],
    ['a converged Downgrade says so', 'Downgrade', converged, undefined, '3 of 3 members healthy'],
    [
      'an Upgrade with a snapshot',
      'Upgrade',
      converged,
      's3://b/pre.db',
      '3 of 3 members healthy; pre-upgrade snapshot s3://b/pre.db',
    ],
  ])('%s', (_case, type, step, snapshotUri, want) => {
    expect(operationResultMessage(type, step, snapshotUri)).toBe(want);
  });
});
