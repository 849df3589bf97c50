// Runs the EnableAuth step (observe etcd's auth, take the next action, until auth is on or the step cannot go on) and the RotateAuth step inside an operation workflow.
//
// Sandbox-pure: activities through proxyActivities with `import type`; the decisions are workflows/auth-plan.ts.
import { proxyActivities } from '@temporalio/workflow';
import type { AuthActivities } from '../activities/auth-activities';
import { describeAuthAction, describeRotation, nextAuthAction } from './auth-plan';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { AuthObservation } from '../contracts/auth';
import { ActivityKinds } from './activity-kinds';

export const authActs = proxyActivities<AuthActivities>(ActivityKinds.operationStep);

// Add root, grant the role, enable: three actions and a final look; more means etcd keeps undoing them.
const MAX_ACTIONS = 6;

/** Observes spec.auth's state for planning; only called for a cluster whose spec has auth. */
export function observeAuth(ref: ClusterRef): Promise<AuthObservation> {
  return authActs.observeAuth({ ref });
}

/** Returns what it did, for the operation's details; a stop leaves the reason to the next plan. */
export async function enableAuthStep(ref: ClusterRef, details: (line: string) => void): Promise<string> {
  for (let n = 0; n < MAX_ACTIONS; n++) {
    const action = nextAuthAction(await authActs.observeAuth({ ref }));
    details(describeAuthAction(action));
    switch (action.kind) {
      case 'Done':
      case 'Stop':
        return describeAuthAction(action);
      case 'AddRootUser':
        await authActs.addRootUser({ ref });
        break;
      case 'GrantRootRole':
        await authActs.grantRootRole({ ref });
        break;
      case 'EnableAuth':
        await authActs.enableAuth({ ref });
        break;
    }
  }
  return 'auth is still not enabled after every action; planning again';
}

/** Applies the Secret's root password to etcd; a rejection is left to the next plan, which waits with AuthFailed. */
export async function rotateAuthStep(ref: ClusterRef): Promise<string> {
  return describeRotation(await authActs.rotateRootPassword({ ref }));
}
