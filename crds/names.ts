// Names and addresses of the objects a cluster owns: what users and the operator both derive from the cluster's name.
import type { EtcdClusterMetadata } from './etcd-cluster';

type Ref = Pick<EtcdClusterMetadata, 'namespace' | 'name'>;

/** etcd's standard ports; metrics and health are served plaintext on their own port. */
export const PORTS = { client: 2379, peer: 2380, metrics: 2381 } as const;

export const peerServiceName = (cluster: string) => `${cluster}-peer`;
export const clientServiceName = (cluster: string) => `${cluster}-client`;
export const claimName = (member: string) => `data-${member}`;

/** The stable DNS name of a member: its Pod hostname under the headless peer Service. */
export function memberHost(ref: Ref, member: string): string {
  return `${member}.${peerServiceName(ref.name)}.${ref.namespace}.svc`;
}
export const memberPeerURL = (ref: Ref, member: string) => `http://${memberHost(ref, member)}:${PORTS.peer}`;
export const memberClientURL = (ref: Ref, member: string) =>
  `http://${memberHost(ref, member)}:${PORTS.client}`;
export const clusterClientEndpoint = (ref: Ref) =>
  `http://${clientServiceName(ref.name)}.${ref.namespace}.svc:${PORTS.client}`;

/** The member name a peer URL built by memberPeerURL belongs to, or undefined for a URL of another shape. */
export function memberFromPeerURL(ref: Ref, url: string): string | undefined {
  const suffix = `.${peerServiceName(ref.name)}.${ref.namespace}.svc:${PORTS.peer}`;
  const m = /^https?:\/\/([^/]+)$/.exec(url.replace(/\/$/, ''));
  if (!m?.[1]?.endsWith(suffix)) return undefined;
  return m[1].slice(0, -suffix.length);
}

/**
 * The https:// forms of the member and client URLs, for a cluster with spec.tls (crds/tls-names.ts picks
 * the scheme from the spec). The client library takes TLS from its credentials, but etcd's own URL flags
 * and the peer URLs stored in its member list need the scheme.
 */
export const memberPeerURLTLS = (ref: Ref, member: string) =>
  `https://${memberHost(ref, member)}:${PORTS.peer}`;
export const memberClientURLTLS = (ref: Ref, member: string) =>
  `https://${memberHost(ref, member)}:${PORTS.client}`;
export const clusterClientEndpointTLS = (ref: Ref) =>
  `https://${clientServiceName(ref.name)}.${ref.namespace}.svc:${PORTS.client}`;
