// Builds the cert-manager Certificates of a cluster whose spec.tls names an issuerRef, as plain data: the peer, the members' serving and the operator's client certificate.
//
// Invariant: the Secret each Certificate fills is the one tlsSecretNames() mounts and reads, so members and the
// operator use what cert-manager issued without another name to configure.
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import {
  certManagerIssuerRef,
  issuedOperatorSecretName,
  issuedPeerSecretName,
  issuedServerSecretName,
  peerDnsNames,
  serverDnsNames,
} from '../crds/tls-names';
import { withAdditionalMetadata } from './additional-metadata';
import { ownerReference } from './member-manifests';

export const CERTIFICATE_API_VERSION = 'cert-manager.io/v1';
export const CERTIFICATE_KIND = 'Certificate';
/** The common name of the operator's client certificate (with etcd auth on, a CN is also an etcd user name). */
export const OPERATOR_CLIENT_CN = 'etcd-conductor';

interface ClusterRef {
  namespace: string;
  name: string;
  uid: string;
}

function certificate(
  ref: ClusterRef,
  name: string,
  spec: {
    issuerRef: ReturnType<typeof certManagerIssuerRef>;
    commonName: string;
    dnsNames?: string[];
    usages: string[];
  },
) {
  return {
    apiVersion: CERTIFICATE_API_VERSION,
    kind: CERTIFICATE_KIND,
    metadata: {
      name,
      namespace: ref.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'etcd-conductor', [Labels.cluster]: ref.name },
      ownerReferences: [ownerReference(ref)],
    },
    spec: {
      secretName: name,
      commonName: spec.commonName,
      ...(spec.dnsNames ? { dnsNames: spec.dnsNames } : {}),
      usages: spec.usages,
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      issuerRef: spec.issuerRef,
    },
  };
}

/**
 * The Certificates spec.tls asks cert-manager for; none for a half of TLS given as a Secret. Peer
 * certificates authenticate both ends of a peer connection, and etcd's grpc-gateway dials its own client
 * port with the serving certificate, so both carry server and client auth.
 */
export function tlsCertificates(ref: ClusterRef, spec: Pick<EtcdClusterSpec, 'tls' | 'additionalMetadata'>) {
  return tlsCertificateManifests(ref, spec).map((c) => withAdditionalMetadata(c, spec));
}

function tlsCertificateManifests(ref: ClusterRef, spec: Pick<EtcdClusterSpec, 'tls'>) {
  const { peer, client } = spec.tls ?? {};
  const both = ['digital signature', 'key encipherment', 'server auth', 'client auth'];
  return [
    ...(peer?.issuerRef
      ? [
          certificate(ref, issuedPeerSecretName(ref.name), {
            issuerRef: certManagerIssuerRef(peer.issuerRef),
            commonName: `${ref.name}-peer`,
            dnsNames: peerDnsNames(ref),
            usages: both,
          }),
        ]
      : []),
    ...(client?.issuerRef
      ? [
          certificate(ref, issuedServerSecretName(ref.name), {
            issuerRef: certManagerIssuerRef(client.issuerRef),
            commonName: `${ref.name}-client`,
            dnsNames: serverDnsNames(ref),
            usages: both,
          }),
          // With an operatorSecretName the user brings the operator's certificate; otherwise it is issued here.
          ...(client.operatorSecretName
            ? []
            : [
                certificate(ref, issuedOperatorSecretName(ref.name), {
                  issuerRef: certManagerIssuerRef(client.issuerRef),
                  commonName: OPERATOR_CLIENT_CN,
                  usages: ['digital signature', 'key encipherment', 'client auth'],
                }),
              ]),
        ]
      : []),
  ];
}
