// The TLS parts of a member Pod: etcd's certificate flags, and the Secrets mounted whole (never subPath) so a renewed certificate reaches etcd without a restart.
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { clientTLSOn, peerTLSOn, tlsSecretNames } from '../crds/tls-names';

/** Where a member's certificates are mounted; each directory is one whole Secret volume. */
export const TLS_MOUNT = '/etc/etcd/tls';
export const PEER_TLS_DIR = `${TLS_MOUNT}/peer`;
export const SERVER_TLS_DIR = `${TLS_MOUNT}/client`;
export const PEER_TLS_VOLUME = 'peer-tls';
export const SERVER_TLS_VOLUME = 'client-tls';

/** Owner and group read only; fsGroup makes the group the Pod's. */
const KEY_FILE_MODE = 0o440;

type TLSSpec = Pick<EtcdClusterSpec, 'tls'>;

/**
 * etcd's certificate flags for spec.tls. etcd reads the certificate and key files on every handshake, so a
 * renewed leaf works at once; the trusted CA files are read only at start (verified on 3.5.35 and 3.6.16),
 * which is why a CA change rolls the members (TLS_CA_HASH_ANNOTATION).
 */
export function tlsEtcdFlags(spec: TLSSpec): Record<string, string> {
  return {
    ...(peerTLSOn(spec)
      ? {
          'peer-cert-file': `${PEER_TLS_DIR}/tls.crt`,
          'peer-key-file': `${PEER_TLS_DIR}/tls.key`,
          'peer-trusted-ca-file': `${PEER_TLS_DIR}/ca.crt`,
          'peer-client-cert-auth': 'true',
        }
      : {}),
    ...(clientTLSOn(spec)
      ? {
          'cert-file': `${SERVER_TLS_DIR}/tls.crt`,
          'key-file': `${SERVER_TLS_DIR}/tls.key`,
          'trusted-ca-file': `${SERVER_TLS_DIR}/ca.crt`,
          'client-cert-auth': 'true',
        }
      : {}),
  };
}

/** The Secret volumes of the member Pod, whole Secrets so the kubelet's refresh reaches the files etcd reads. */
export function tlsVolumes(spec: TLSSpec, cluster: string) {
  const names = tlsSecretNames(spec, cluster);
  return [
    ...(names.peer
      ? [{ name: PEER_TLS_VOLUME, secret: { secretName: names.peer, defaultMode: KEY_FILE_MODE } }]
      : []),
    ...(names.server
      ? [{ name: SERVER_TLS_VOLUME, secret: { secretName: names.server, defaultMode: KEY_FILE_MODE } }]
      : []),
  ];
}

export function tlsVolumeMounts(spec: TLSSpec) {
  return [
    ...(peerTLSOn(spec) ? [{ name: PEER_TLS_VOLUME, mountPath: PEER_TLS_DIR, readOnly: true }] : []),
    ...(clientTLSOn(spec) ? [{ name: SERVER_TLS_VOLUME, mountPath: SERVER_TLS_DIR, readOnly: true }] : []),
  ];
}
