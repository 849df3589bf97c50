// How a cluster with TLS notices a CA bundle edited in its Secrets: the operator may not list or watch Secrets (deploy/rbac-allowlist.txt), so an idle cluster with TLS looks again at most every minute.
//
// A minute is the kubelet's own Secret sync period: members see an edited Secret no sooner, so a CA change
// starts rolling about as soon as the members could use it. Clusters without TLS keep their idle interval
// and their recorded command sequence.
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common';
import { patched } from '@temporalio/workflow';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';

/** The patch behind the shorter idle wait (histories of TLS clusters before it waited the full interval). */
export const TLS_RECHECK_PATCH = 'tls-ca-recheck';
export const TLS_RECHECK_MS = 60_000;

/** The shorter of `wait` and TLS_RECHECK_MS when spec.tls is set; `wait` otherwise. Pure. */
export function idleWaitWithTLS(spec: Pick<EtcdClusterSpec, 'tls'>, wait: Duration): Duration {
  if (!spec.tls?.peer && !spec.tls?.client) return wait;
  return Math.min(msToNumber(wait), TLS_RECHECK_MS);
}

/** idleWaitWithTLS behind TLS_RECHECK_PATCH; only a cluster with TLS asks for the patch. */
export function tlsRecheck(spec: Pick<EtcdClusterSpec, 'tls'>, wait: Duration): Duration {
  if (!spec.tls?.peer && !spec.tls?.client) return wait;
  return patched(TLS_RECHECK_PATCH) ? idleWaitWithTLS(spec, wait) : wait;
}
