// What observation tells the workflow about the TLS Secrets cert-manager issues for a cluster and the operator's copies of them: facts about public certificates only, never a key or a certificate.
import type { TLSRole } from '../crds/tls-names';

/** One issued Secret (an issuerRef half) compared with the operator's copy that members mount. */
export interface IssuedTLSRoleObservation {
  role: TLSRole;
  /** cert-manager's Secret exists with tls.crt, tls.key and ca.crt. */
  issuedReady: boolean;
  /** The operator's copy exists. */
  appliedExists: boolean;
  /** cert-manager's ca.crt holds a CA the copy's ca.crt lacks: the issuer's CA was renewed. */
  newCA: boolean;
  /** The copy's ca.crt holds a CA cert-manager's no longer does: the old CA, still trusted. */
  oldCA: boolean;
  /** cert-manager reissued the certificate (tls.crt or tls.key differ from the copy's). */
  reissued: boolean;
  /** The copies' ca.crt bundles that check it (what members started on them trust) verify the reissued certificate. */
  reissuedTrusted: boolean;
}

export interface IssuedTLSObservation {
  roles: IssuedTLSRoleObservation[];
  /** How long ago the operator last put reissued certificates into its copies (absent: never). */
  reissueAppliedAgoMs?: number;
}

/** The stages of moving cert-manager's changes into the operator's copies (workflows/issued-tls-plan.ts). */
export type IssuedTLSStage = 'Copy' | 'TrustNewCA' | 'ApplyReissued' | 'DropOldCA';
