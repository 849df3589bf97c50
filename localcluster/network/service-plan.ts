// Decides the names and forwarders of the stack's Services from Services and their endpoints: what CoreDNS and kube-proxy would serve.

export interface ServicePort {
  name: string;
  port: number;
  protocol: string;
  /** The Pod port: a number, a container port name, or absent for "same as port". */
  targetPort?: number | string;
}

export interface ServiceView {
  namespace: string;
  name: string;
  uid: string;
  /** 'None' for headless; empty for ExternalName. */
  clusterIP: string;
  type: string;
  publishNotReadyAddresses: boolean;
  /** Absent for Services with manually managed endpoints. */
  selector?: Record<string, string>;
  ports: ServicePort[];
}

export interface EndpointView {
  addresses: string[];
  /** conditions.ready; an absent condition means ready. */
  ready: boolean;
  hostname?: string;
}

export interface SliceView {
  namespace: string;
  serviceName: string;
  ports: Array<{ name: string; port: number; protocol: string }>;
  endpoints: EndpointView[];
}

export interface Forwarder {
  /** namespace/service/port-name: stable across updates. */
  key: string;
  listenIp: string;
  listenPort: number;
  targets: Array<{ ip: string; port: number }>;
}

export interface ServicePlan {
  hosts: Array<{ ip: string; name: string }>;
  forwarders: Forwarder[];
}

const DOMAINS = ['svc', 'svc.cluster.local'];

function names(prefix: string): string[] {
  return DOMAINS.map((d) => `${prefix}.${d}`);
}

/**
 * Every connection between Pods of the stack comes from 127.0.0.1 (the kernel's source address for loopback routes),
 * where a real cluster's reverse lookup of a Pod address names the Pod under its headless Service. etcd's peer
 * client-certificate check wants that reverse lookup to match a SAN such as `*.<svc>.<ns>.svc` (certificates from
 * cert-manager carry no IP SANs), so 127.0.0.1 also gets this name under every headless Service with endpoints. It
 * looks like CoreDNS's name for an endpoint without a hostname, and no Pod is ever called that.
 */
export const LOOPBACK_PEER = '127-0-0-1';

/**
 * Headless Services: `<svc>.<ns>.svc` lists ready endpoint addresses (all of them with publishNotReadyAddresses),
 * `<hostname>.<svc>.<ns>.svc` the endpoint's own address. ClusterIP Services: the name maps to the service address
 * (`serviceIp`), which forwards each TCP port to ready endpoints.
 */
export function planServices(
  services: ServiceView[],
  slices: SliceView[],
  serviceIp: (svc: ServiceView) => string | undefined,
): ServicePlan {
  const hosts: ServicePlan['hosts'] = [];
  const forwarders: Forwarder[] = [];
  for (const svc of services) {
    if (svc.type === 'ExternalName' || svc.clusterIP === '') continue;
    const own = slices.filter((s) => s.namespace === svc.namespace && s.serviceName === svc.name);
    const usable = (e: EndpointView): boolean => e.ready || svc.publishNotReadyAddresses;
    const base = `${svc.name}.${svc.namespace}`;
    if (svc.clusterIP === 'None') {
      const seen = new Set<string>();
      for (const slice of own) {
        for (const e of slice.endpoints.filter(usable)) {
          for (const ip of e.addresses) {
            if (!seen.has(ip)) for (const n of names(base)) hosts.push({ ip, name: n });
            seen.add(ip);
            if (e.hostname) for (const n of names(`${e.hostname}.${base}`)) hosts.push({ ip, name: n });
          }
        }
      }
      if (seen.size > 0)
        for (const n of names(`${LOOPBACK_PEER}.${base}`)) hosts.push({ ip: '127.0.0.1', name: n });
      continue;
    }
    const ip = serviceIp(svc);
    if (ip === undefined) continue;
    for (const n of names(base)) hosts.push({ ip, name: n });
    for (const port of svc.ports.filter((p) => p.protocol === 'TCP')) {
      const targets: Forwarder['targets'] = [];
      for (const slice of own) {
        const sp = slice.ports.find((p) => p.name === port.name && p.protocol === 'TCP');
        if (sp === undefined) continue;
        for (const e of slice.endpoints.filter((x) => x.ready))
          for (const a of e.addresses) targets.push({ ip: a, port: sp.port });
      }
      forwarders.push({
        key: `${svc.namespace}/${svc.name}/${port.name || port.port}`,
        listenIp: ip,
        listenPort: port.port,
        targets,
      });
    }
  }
  return { hosts, forwarders };
}

export function isLoopback(ip: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}
