// Every operation's module by its OperationType: adding an operation is its module, one line here, and its tests.
import type { OperationType } from '../../crds/etcd-cluster';
import type { ActionStep, Step } from '../plan';
import { operationFor } from '../plan';
import { bootstrap } from './bootstrap';
import { defrag } from './defrag';
import { downgrade } from './downgrade';
import { enableAuth } from './enable-auth';
import { heal } from './heal';
import type { OperationModule } from './operation-module';
import { pause } from './pause';
import { rebuild } from './rebuild';
import { recover } from './recover';
import { resume } from './resume';
import { rollout } from './rollout';
import { rotateAuth } from './rotate-auth';
import { scaleDown } from './scale-down';
import { scaleUp } from './scale-up';
import { upgrade } from './upgrade';

/** A Record, so the type checker refuses an OperationType without a module. */
const modules: Record<OperationType, OperationModule> = {
  Bootstrap: bootstrap,
  ScaleUp: scaleUp,
  ScaleDown: scaleDown,
  Heal: heal,
  Pause: pause,
  Resume: resume,
  Upgrade: upgrade,
  Downgrade: downgrade,
  Rollout: rollout,
  EnableAuth: enableAuth,
  RotateAuth: rotateAuth,
  Defrag: defrag,
  Recover: recover,
  Rebuild: rebuild,
};

export function operationModule(type: OperationType): OperationModule {
  return modules[type];
}

/**
 * Whether a running operation should take this step itself. On a Wait it keeps waiting (its progress
 * deadline bounds that); on None, or a step it does not continue with, it ends Succeeded and the cluster
 * workflow starts the next operation.
 */
export function continuesOperation(operation: OperationType, step: Step, desiredReplicas: number): boolean {
  if (step.kind === 'Wait' || step.kind === 'None') return false;
  return (
    operationFor(step, desiredReplicas) === operation || modules[operation].alsoContinues.includes(step.kind)
  );
}

/** The static summary of an operation workflow, e.g. "scale default/main 3 -> 5". */
export function summarize(
  operation: OperationType,
  cluster: { namespace: string; name: string },
  from: number,
  to: number,
  first?: ActionStep,
): string {
  return modules[operation].summarize(`${cluster.namespace}/${cluster.name}`, from, to, first);
}
