// The cluster workflow's part of spec.tls.mode Auto: asking the operator to issue or renew, and when to look again.
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { autoTLSOn } from '../crds/tls-names';
import type { ClusterRunState } from './cluster-run-state';
import { clusterActs as acts } from './cluster-run-state';

/**
 * spec.tls.mode Auto: has the operator make what is missing and renew what is due (activities/auto-tls.ts) when
 * this run has not asked yet, the renewal time has come, or spec.tls.auto changed; tells what changed as an Event.
 * What it issues, the staged copies (advanceIssuedTLS) roll in on this same look.
 */
export async function keepAutoTLS(s: ClusterRunState, spec: EtcdClusterSpec): Promise<void> {
  const lifetimes = JSON.stringify(spec.tls?.auto ?? {});
  const known = s.autoTLS;
  if (known && known.lifetimes === lifetimes && Date.now() < Date.parse(known.renewalTime)) return;
  const result = await acts.issueAutoTLS({ ref: s.ref, spec });
  if (!result) return;
  s.autoTLS = { ...result, lifetimes };
  if (result.changes.length === 0) return;
  await acts.recordEvent({
    ref: s.ref,
    type: 'Normal',
    reason: result.changes.some((c) => c.startsWith('renewed')) ? 'AutoTLSRenewed' : 'AutoTLSIssued',
    message: result.changes.join('; '),
  });
}

/** How long until the auto-TLS renewal is due (at least a second), when this run knows it. */
export function autoTLSRenewalInMs(s: ClusterRunState): number | undefined {
  if (!s.autoTLS || !autoTLSOn(s.desired.spec)) return undefined;
  return Math.max(1000, Date.parse(s.autoTLS.renewalTime) - Date.now());
}
