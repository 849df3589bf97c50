// What spec.tls decides about names: URL schemes, the Secrets members and the operator use, and the DNS names certificates must cover.
import type { CertManagerIssuerRef, EtcdClusterSpec } from './etcd-cluster';
import {
  clientServiceName,
  clusterClientEndpoint,
  clusterClientEndpointTLS,
  memberClientURL,
  memberClientURLTLS,
  memberPeerURL,
  memberPeerURLTLS,
  peerServiceName,
} from './names';

type Ref = { namespace: string; name: string };
type TLSSpec = Pick<EtcdClusterSpec, 'tls'>;

/** spec.tls.mode Auto: the operator makes the CA and every certificate (activities/auto-tls.ts). */
export const autoTLSOn = (spec: TLSSpec) => spec.tls?.mode === 'Auto';

/** Peer TLS is on: spec.tls.peer is set, or mode Auto turns it on. */
export const peerTLSOn = (spec: TLSSpec) => autoTLSOn(spec) || spec.tls?.peer !== undefined;

/** Client TLS (with client-certificate auth) is on: spec.tls.client is set, or mode Auto turns it on. */
export const clientTLSOn = (spec: TLSSpec) => autoTLSOn(spec) || spec.tls?.client !== undefined;

/** Either half of TLS is on. */
export const anyTLSOn = (spec: TLSSpec) => peerTLSOn(spec) || clientTLSOn(spec);

/** The member's peer URL as etcd lists it: https:// when peer TLS is on. */
export const peerURLFor = (spec: TLSSpec, ref: Ref, member: string) =>
  peerTLSOn(spec) ? memberPeerURLTLS(ref, member) : memberPeerURL(ref, member);

/** The member's client URL: https:// when client TLS is on. */
export const clientURLFor = (spec: TLSSpec, ref: Ref, member: string) =>
  clientTLSOn(spec) ? memberClientURLTLS(ref, member) : memberClientURL(ref, member);

/** The client Service URL status shows: https:// when client TLS is on. */
export const clientEndpointFor = (spec: TLSSpec, ref: Ref) =>
  clientTLSOn(spec) ? clusterClientEndpointTLS(ref) : clusterClientEndpoint(ref);

/** With mode Auto: the Secret holding the CA the operator made (tls.crt, tls.key), kept for the cluster's life. */
export const autoCASecretName = (cluster: string) => `${cluster}-ca`;
/** With mode Auto: the Secret clients use (tls.crt, tls.key, ca.crt), the operator's staged copy of what it issued. */
export const autoClientSecretName = (cluster: string) => `${cluster}-client-tls`;
/** With mode Auto: where the operator issues the clients' certificate before staging it into autoClientSecretName. */
export const autoIssuedClientSecretName = (cluster: string) => `${cluster}-client-tls-issued`;

/** Secrets (and cert-manager Certificates) the operator names itself when spec.tls uses an issuerRef. */
export const issuedPeerSecretName = (cluster: string) => `${cluster}-peer-tls`;
export const issuedServerSecretName = (cluster: string) => `${cluster}-server-tls`;
export const issuedOperatorSecretName = (cluster: string) => `${cluster}-operator-tls`;

/** The Secrets of one cluster's TLS, by role; absent where that half of TLS is off. */
export interface TLSSecretNames {
  peer?: string;
  server?: string;
  operator?: string;
}

/**
 * The operator's copy of a Secret cert-manager issues: what members mount and the operator connects with. The
 * operator moves cert-manager's changes into it in stages (activities/issued-tls.ts), so a CA that cert-manager
 * renews is trusted by every member before any member or client presents a certificate it signed.
 */
export const appliedTLSSecretName = (issued: string) => `${issued}-applied`;

/** Whose certificate: members' peer and serving ones, the operator's client one, and (mode Auto) the users' client one. */
export type TLSRole = 'peer' | 'server' | 'operator' | 'client';

/** A Secret cert-manager fills for this cluster (an issuerRef half) and the operator's copy of it. */
export interface IssuedTLSSecret {
  role: TLSRole;
  issued: string;
  applied: string;
}

/**
 * The Secrets cert-manager (an issuerRef half) or the operator itself (mode Auto) issues for this cluster, by
 * role, each with the copy members, the operator or clients use: none for halves given as Secrets.
 */
export function issuedTLSSecrets(spec: TLSSpec, cluster: string): IssuedTLSSecret[] {
  const { peer, client } = spec.tls ?? {};
  const of = (role: TLSRole, issued: string): IssuedTLSSecret => ({
    role,
    issued,
    applied: appliedTLSSecretName(issued),
  });
  if (autoTLSOn(spec))
    return [
      of('peer', issuedPeerSecretName(cluster)),
      of('server', issuedServerSecretName(cluster)),
      of('operator', issuedOperatorSecretName(cluster)),
      // Clients' copy has the plain name status and docs give; its ca.crt moves in stages like the members'.
      { role: 'client', issued: autoIssuedClientSecretName(cluster), applied: autoClientSecretName(cluster) },
    ];
  return [
    ...(peer?.issuerRef ? [of('peer', issuedPeerSecretName(cluster))] : []),
    ...(client?.issuerRef ? [of('server', issuedServerSecretName(cluster))] : []),
    ...(client?.issuerRef && !client.operatorSecretName
      ? [of('operator', issuedOperatorSecretName(cluster))]
      : []),
  ];
}

/** The Secrets members mount and the operator reads, by role: the user's, or the operator's copy of cert-manager's. */
export function tlsSecretNames(spec: TLSSpec, cluster: string): TLSSecretNames {
  if (autoTLSOn(spec))
    return {
      peer: appliedTLSSecretName(issuedPeerSecretName(cluster)),
      server: appliedTLSSecretName(issuedServerSecretName(cluster)),
      operator: appliedTLSSecretName(issuedOperatorSecretName(cluster)),
    };
  const { peer, client } = spec.tls ?? {};
  const copy = (issuerRef: unknown, issued: string) => (issuerRef ? appliedTLSSecretName(issued) : issued);
  return {
    ...(peer ? { peer: peer.secretName ?? copy(peer.issuerRef, issuedPeerSecretName(cluster)) } : {}),
    ...(client
      ? {
          server: client.secretName ?? copy(client.issuerRef, issuedServerSecretName(cluster)),
          operator: client.operatorSecretName ?? copy(client.issuerRef, issuedOperatorSecretName(cluster)),
        }
      : {}),
  };
}

/**
 * DNS names a peer certificate must cover: every member's name under the headless Service. The
 * `.cluster.local` forms matter beyond hostname checks: with peer client-certificate auth etcd accepts a
 * peer only if a reverse lookup of its address (a Pod's PTR record is `<pod>.<service>.<ns>.svc.cluster.local`)
 * or a forward lookup of a non-wildcard name matches the certificate.
 */
export function peerDnsNames(ref: Ref): string[] {
  const svc = `${peerServiceName(ref.name)}.${ref.namespace}.svc`;
  return [`*.${svc}`, `*.${svc}.cluster.local`];
}

/** DNS names a member's serving certificate must cover: member client URLs and the client Service. */
export function serverDnsNames(ref: Ref): string[] {
  const client = `${clientServiceName(ref.name)}.${ref.namespace}.svc`;
  return [...peerDnsNames(ref), client, `${client}.cluster.local`];
}

export const DEFAULT_ISSUER_GROUP = 'cert-manager.io';

/** The issuerRef as cert-manager's Certificate wants it, with the CRD's defaults filled in. */
export const certManagerIssuerRef = (ref: CertManagerIssuerRef) => ({
  name: ref.name,
  kind: ref.kind ?? 'Issuer',
  group: ref.group ?? DEFAULT_ISSUER_GROUP,
});

/** On a member Pod: a hash of the CA bundles it trusts, so a CA change changes the rendered Pod and rolls members. */
export const TLS_CA_HASH_ANNOTATION = 'etcd.conductor.dev/tls-ca-hash';
