// Upgrade: restart members one by one on the newer version, the leader last (leadership handed to an upgraded member first).
import type { OperationModule } from './operation-module';

export const upgrade: OperationModule = {
  type: 'Upgrade',
  summarize: (ref, _from, _to, first) => {
    const v =
      first?.kind === 'UpgradeMember'
        ? first
        : first?.kind === 'MoveLeader' && first.reason === 'Upgrade'
          ? first.upgrade
          : undefined;
    return v ? `upgrade ${ref} ${v.from} -> ${v.to}` : `upgrade ${ref}`;
  },
  // The member whose Pod it deleted comes back through RecreatePod, inside the same operation.
  alsoContinues: ['RecreatePod'],
  compensation: 'restartStoppedMember',
  snapshotBefore: ['UpgradeMember', 'MoveLeader', 'EnableDowngrade'],
  changesVersions: true,
};
