// The operation registry: every OperationType has its module, and the cluster and operation workflows name no operation.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATION_TYPES } from '../../crds/etcd-cluster';
import type { OperationType } from '../../crds/etcd-cluster';
import { continuesOperation, operationModule, summarize } from './registry';

describe('operation registry', () => {
  it.each(OPERATION_TYPES)('has the module of %s, under its own type', (type) => {
    expect(operationModule(type).type).toBe(type);
  });

  // Rolling restarts stop a member to restart it; membership changes add a learner: each undoes its own kind.
  it.each<[OperationType, string]>([
    ['Bootstrap', 'removePendingLearner'],
    ['ScaleUp', 'removePendingLearner'],
    ['ScaleDown', 'removePendingLearner'],
    ['Heal', 'removePendingLearner'],
    ['Pause', 'removePendingLearner'],
    ['Resume', 'removePendingLearner'],
    ['Upgrade', 'restartStoppedMember'],
    ['Downgrade', 'restartStoppedMember'],
    ['Rollout', 'restartStoppedMember'],
    ['EnableAuth', 'removePendingLearner'],
    ['RotateAuth', 'removePendingLearner'],
    ['Defrag', 'removePendingLearner'],
  ])('%s compensates by %s', (type, compensation) => {
    expect(operationModule(type).compensation).toBe(compensation);
  });

  it('lets only version changes take the pre-upgrade snapshot and follow member versions', () => {
    const versionChanges = OPERATION_TYPES.filter((t) => operationModule(t).changesVersions);
    expect(versionChanges).toEqual(['Upgrade', 'Downgrade']);
    expect(OPERATION_TYPES.filter((t) => operationModule(t).snapshotBefore)).toEqual(versionChanges);
  });

  it('sets status.paused only after Pause and Resume', () => {
    expect(
      OPERATION_TYPES.map((t) => [t, operationModule(t).pausedAfter]).filter(([, p]) => p !== undefined),
    ).toEqual([
      ['Pause', true],
      ['Resume', false],
    ]);
  });

  it('never continues an operation on a wait or on nothing to do', () => {
    for (const type of OPERATION_TYPES) {
      expect(continuesOperation(type, { kind: 'Wait', reason: 'MemberNotReady', message: 'x' }, 3)).toBe(
        false,
      );
      expect(continuesOperation(type, { kind: 'None', reason: 'Converged', message: 'x' }, 3)).toBe(false);
    }
  });

  it('summarizes with the cluster as namespace/name', () => {
    expect(summarize('ScaleUp', { namespace: 'db', name: 'main' }, 3, 5)).toBe('scale db/main 3 -> 5');
  });
});

describe('the cluster and operation workflows', () => {
  // Adding an operation touches its module, a registry line and its tests: the workflows know only the interface.
  it.each(['cluster-workflow.ts', 'operation-workflow.ts'])('%s names no operation type', (file) => {
    const source = readFileSync(join(__dirname, '..', file), 'utf8');
    const named = OPERATION_TYPES.filter((t) => new RegExp(`['"\`]${t}['"\`]`).test(source));
    expect(named).toEqual([]);
  });
});
