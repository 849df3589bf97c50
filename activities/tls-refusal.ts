// Tells a TLS refusal from an unreachable member: when members refuse the operator's client certificate (or it theirs), no answer says nothing about quorum, and status must say what really happened.
//
// grpc-js and Node's TLS report a refused handshake in OpenSSL's words: etcd (Go) answers a client
// certificate it cannot verify with a "bad certificate" alert, and the operator's own check of a member's
// serving certificate fails with "unable to verify" or "self-signed certificate in chain".
const TLS_REFUSAL =
  /alert (?:bad certificate|unknown ca|certificate unknown|certificate required|handshake failure|decrypt error)|certificate verify failed|unable to (?:verify|get local issuer)|self[- ]signed certificate|UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT|CERT_SIGNATURE_FAILURE|certificate signature failure/i;

const text = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The first error's words when every one of `errors` is a TLS refusal; undefined when none failed or any failed otherwise. */
export function tlsRefusal(errors: readonly unknown[]): string | undefined {
  if (errors.length === 0) return undefined;
  if (!errors.every((e) => TLS_REFUSAL.test(text(e)))) return undefined;
  return text(errors[0]);
}
