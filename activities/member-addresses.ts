// Observation dials a member at the Pod address it has just read, not by the member's DNS name.
//
// A member's name (`<member>.<cluster>-peer.<ns>.svc`) exists only once its Pod has an address and the headless
// Service publishes it. Asked before that, DNS answers "no such name", and resolvers cache the answer: CoreDNS for
// its `cache` seconds (5 on the local stack, 30 with kubeadm's defaults), so an operator in the cluster could not
// reach a joining member for that long after the member started. On this machine a host process's lookups of names
// that do not exist yet go to the machine's resolver, which at times did not answer for 5 s; four such lookups
// filled Node's thread pool and every other lookup (members that existed) waited behind them: a scale-up's
// observation took 4 s and found no member reachable.
//
// So observation (cluster-observation.ts) asks a member only once its Pod has an address, and dials that address,
// keeping the member's name for TLS verification and the :authority header. The address comes from the Pod list of
// the same observation, and each answer is checked to come from the member asked (its member id), so an address
// that has moved to another Pod since is never taken for the member. Every other call goes by name.

/** Where to dial a member: its Pod's address, and the name its certificate and :authority carry. */
export interface DialTarget {
  url: string;
  authority: string;
}

/** `url` (a member's client URL by name) dialled at `ip`; undefined when the URL is not of that shape or no address. */
export function dialAt(url: string, ip: string | undefined): DialTarget | undefined {
  const m = /^(https?):\/\/([^/:]+):(\d+)\/?$/.exec(url.trim());
  if (!ip || !m?.[1] || !m[2] || !m[3]) return undefined;
  return { url: `${m[1]}://${hostOf(ip)}:${m[3]}`, authority: m[2] };
}

/** An address as the host part of a URL: an IPv6 address in brackets. */
export function hostOf(ip: string): string {
  return ip.includes(':') ? `[${ip}]` : ip;
}
