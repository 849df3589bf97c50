// Derives each Service's endpoints from the Pods its selector matches, as the EndpointSlice controller would; needed because the apiserver refuses loopback addresses in EndpointSlices, and every Pod here has one.
import type { ServiceView, SliceView } from './service-plan';

export interface PodView {
  namespace: string;
  labels: Record<string, string>;
  podIP?: string;
  ready: boolean;
  terminating: boolean;
  hostname?: string;
  subdomain?: string;
  /** Named container ports, for Services whose targetPort is a name. */
  namedPorts: Record<string, number>;
}

function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** One SliceView per Service with a selector; Services without one (manual endpoints) get none. */
export function slicesFromPods(services: ServiceView[], pods: PodView[]): SliceView[] {
  const slices: SliceView[] = [];
  for (const svc of services) {
    const selector = svc.selector;
    if (!selector || Object.keys(selector).length === 0) continue;
    const members = pods.filter(
      (p) => p.namespace === svc.namespace && p.podIP && !p.terminating && selects(selector, p.labels),
    );
    // Ports are resolved per Pod when targetPort is a name; group Pods by the port numbers they resolve to.
    const groups = new Map<string, { ports: SliceView['ports']; endpoints: SliceView['endpoints'] }>();
    for (const pod of members) {
      const ports = svc.ports.map((p) => {
        const target = p.targetPort ?? p.port;
        const port = typeof target === 'number' ? target : (pod.namedPorts[target] ?? Number(target));
        return { name: p.name, port, protocol: p.protocol };
      });
      if (ports.some((p) => !Number.isFinite(p.port) || p.port <= 0)) continue;
      const key = JSON.stringify(ports);
      const group = groups.get(key) ?? { ports, endpoints: [] };
      group.endpoints.push({
        addresses: [pod.podIP as string],
        ready: pod.ready,
        ...(pod.hostname && pod.subdomain === svc.name ? { hostname: pod.hostname } : {}),
      });
      groups.set(key, group);
    }
    for (const g of groups.values()) slices.push({ namespace: svc.namespace, serviceName: svc.name, ...g });
  }
  return slices;
}
