// Which refusal the cluster workflow tells as a Warning Event: each refused message once, not once per observation (pure).
//
// A refused upgrade path, an invalid auth Secret, failing auth and broken TLS trust share one memory (the
// message last told); a refused storage growth has its own, since it is told beside the others. Messages
// name Secrets and versions, never a value.
import { Reasons } from '../crds/conditions';
import type { EventReason } from '../contracts/event-reasons';
import type { Step } from './plan';

/** The refusal messages last told. */
export interface RefusalsTold {
  refusal: string;
  storage: string;
}

/** Refusals the plan waits on until the spec or a Secret changes. */
const WAIT_REFUSALS = [
  Reasons.UpgradePathRefused,
  Reasons.AuthSecretInvalid,
  Reasons.AuthFailed,
  Reasons.TLSTrustBroken,
] as const satisfies readonly EventReason[];
const waitRefusal = (reason: string): reason is (typeof WAIT_REFUSALS)[number] =>
  (WAIT_REFUSALS as readonly string[]).includes(reason);

/** The Event to record for this step, if any, and what is remembered as told after it. */
export function refusalNotice(
  step: Step,
  told: RefusalsTold,
): { event?: { reason: EventReason; message: string }; told: RefusalsTold } {
  if (step.kind === 'Wait' && waitRefusal(step.reason) && told.refusal !== step.message) {
    return {
      event: { reason: step.reason, message: step.message },
      told: { ...told, refusal: step.message },
    };
  }
  if (
    step.kind === 'None' &&
    step.reason === Reasons.StorageExpansionRefused &&
    told.storage !== step.message
  ) {
    return {
      event: { reason: Reasons.StorageExpansionRefused, message: step.message },
      told: { ...told, storage: step.message },
    };
  }
  return { told };
}
