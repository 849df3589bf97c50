// Decides the next stage of moving what cert-manager issued into the operator's copies that members mount: a renewed CA is trusted by every member before any certificate it signed is presented, and the old CA is dropped only after that.
//
// Pure and sandbox-safe. etcd reads its trusted CAs only at start, and cert-manager rewrites ca.crt and the
// certificate together; mounted directly, a renewal would make members present certificates their peers (and
// the members the operator's) do not trust yet. The stages are those of a user-driven CA rotation
// (docs/operations.md, Rotating the CA): trust old and new (members roll), reissue (no restart), drop the old
// CA (members roll).
import type { IssuedTLSObservation, IssuedTLSStage } from '../contracts/issued-tls';

/**
 * After reissued certificates are in the copies, the old CA stays trusted this long: the kubelet refreshes a
 * mounted Secret within its sync period plus its cache's TTL (a minute each by default), in member Pods and in
 * clients' Pods alike, and a member restarted on the new CA alone refuses a peer still presenting the old one.
 */
export const OLD_CA_GRACE_MS = 120_000;

export type IssuedTLSDecision =
  | { kind: 'Stage'; stage: IssuedTLSStage; why: string }
  /** Nothing to do before `afterMs` has passed; look again then. */
  | { kind: 'Later'; afterMs: number; why: string };

/** A member Pod as far as the stages care: whether it runs the current template (copies included) and is Ready. */
export interface IssuedTLSMemberView {
  upToDate?: boolean;
  ready: boolean;
}

/**
 * The next stage, or undefined when the copies match what cert-manager issued (or nothing can be done yet:
 * cert-manager still issuing, members still rolling onto the copies; the cluster's own plan runs that roll).
 */
export function planIssuedTLS(
  tls: IssuedTLSObservation,
  members: readonly IssuedTLSMemberView[],
): IssuedTLSDecision | undefined {
  const { roles } = tls;
  if (roles.length === 0 || roles.some((r) => !r.issuedReady)) return undefined;
  if (roles.some((r) => !r.appliedExists))
    return { kind: 'Stage', stage: 'Copy', why: 'the operator has no copy of an issued Secret yet' };
  // Adding trust never cuts anyone off: done at once, whatever the members run.
  if (roles.some((r) => r.newCA))
    return {
      kind: 'Stage',
      stage: 'TrustNewCA',
      why: "cert-manager's ca.crt holds a new CA: members trust it next to the old one first",
    };
  // The rest waits until every member restarted on the copies' CAs and is Ready.
  const settled = members.length > 0 && members.every((m) => m.upToDate === true && m.ready);
  if (!settled) return undefined;
  if (roles.some((r) => r.reissued && r.reissuedTrusted))
    return {
      kind: 'Stage',
      stage: 'ApplyReissued',
      why: 'every member trusts the CA of the reissued certificates: members and the operator present them now',
    };
  if (roles.some((r) => r.reissued)) return undefined;
  if (roles.some((r) => r.oldCA)) {
    const ago = tls.reissueAppliedAgoMs;
    if (ago !== undefined && ago < OLD_CA_GRACE_MS)
      return {
        kind: 'Later',
        afterMs: OLD_CA_GRACE_MS - ago,
        why: 'the kubelet is still refreshing mounted certificates; the old CA is dropped after that',
      };
    return {
      kind: 'Stage',
      stage: 'DropOldCA',
      why: 'every certificate comes from the new CA: members drop the old one',
    };
  }
  return undefined;
}
