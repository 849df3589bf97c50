// The real nodes' network on the host: one bridge per stack holding the node network, one network namespace per node
// joined to it by a veth pair, and host routes to each node's Pod CIDR, so Pods reach each other and the host reaches Pods.
// Nothing here touches the machine's outside interfaces; teardown removes exactly the names this stack's layout derives.
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { sh, shQuiet } from './host-commands';
import type { RealNodeLayout } from './real-node-layout';

const prefixLength = (cidr: string) => cidr.split('/')[1] ?? '24';

/**
 * With ip_forward on, the host would also route Pod packets out of the machine's outside interface (or outside
 * packets into the node network); these FORWARD rules keep the stack's network to itself: traffic may only be routed
 * from the bridge back to the bridge (node to node). The comment names the stack so teardown removes exactly these.
 */
export function confineRules(net: RealNodeLayout): string[][] {
  const tag = ['-m', 'comment', '--comment', `etcd-conductor ${net.prefix}`];
  return [
    ['FORWARD', '-i', net.bridge, '!', '-o', net.bridge, ...tag, '-j', 'DROP'],
    ['FORWARD', '-o', net.bridge, '!', '-i', net.bridge, ...tag, '-j', 'DROP'],
  ];
}

export async function createNodeNetwork(net: RealNodeLayout): Promise<void> {
  await sh('ip', ['link', 'add', net.bridge, 'type', 'bridge']);
  await sh('ip', ['addr', 'add', `${net.bridgeIp}/${prefixLength(net.nodeNetwork)}`, 'dev', net.bridge]);
  await sh('ip', ['link', 'set', net.bridge, 'up']);
  for (const rule of confineRules(net)) await sh('iptables', ['-w', '-I', ...rule]);
  // Pod traffic between nodes is routed through the host (node A -> bridge -> host -> node B).
  enableIpForward();
  for (const node of net.nodes) {
    await sh('ip', ['netns', 'add', node.netns]);
    await sh('ip', [
      'link',
      'add',
      node.hostVeth,
      'type',
      'veth',
      'peer',
      'name',
      'eth0',
      'netns',
      node.netns,
    ]);
    await sh('ip', ['link', 'set', node.hostVeth, 'master', net.bridge, 'up']);
    const inNs = (args: string[]) => sh('ip', ['-n', node.netns, ...args]);
    await inNs(['link', 'set', 'lo', 'up']);
    await inNs(['addr', 'add', `${node.ip}/${prefixLength(net.nodeNetwork)}`, 'dev', 'eth0']);
    await inNs(['link', 'set', 'eth0', 'up']);
    await inNs(['route', 'add', 'default', 'via', net.bridgeIp]);
    await sh('ip', ['route', 'add', node.podCidr, 'via', node.ip, 'dev', net.bridge]);
  }
  // The host has no kube-proxy of its own: Service addresses are routed to the first node, whose kube-proxy translates
  // (and masquerades, so replies come back the same way).
  const first = net.nodes[0];
  if (first) await sh('ip', ['route', 'add', net.serviceCidr, 'via', first.ip, 'dev', net.bridge]);
}

const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';
/**
 * The host's ip_forward before any real-node stack turned it on, kept machine-wide (not per stack): stacks of several
 * checkouts share the setting, so whichever stack goes down last, with no other stack's bridge left, puts it back.
 */
export const IP_FORWARD_ORIGINAL = '/run/etcd-conductor/ip_forward.original';

function enableIpForward(): void {
  const now = readFileSync(IP_FORWARD, 'utf8').trim();
  if (now === '1') return;
  mkdirSync('/run/etcd-conductor', { recursive: true });
  if (!existsSync(IP_FORWARD_ORIGINAL)) writeFileSync(IP_FORWARD_ORIGINAL, `${now}\n`);
  writeFileSync(IP_FORWARD, '1\n');
}

/**
 * Pure: what ip_forward becomes when a stack goes down. Restored only if a stack set it (`original` known) and no other
 * real-node stack (its `ec<B>-br` bridge) still routes through the host; otherwise left as it is.
 */
export function ipForwardOnDown(input: {
  original: string | undefined;
  otherBridges: string[];
}): string | undefined {
  if (input.original === undefined || input.otherBridges.length > 0) return undefined;
  return input.original;
}

/** Bridges of real-node stacks other than `net`'s, from `ip -o link show type bridge`. */
export function otherStackBridges(linkList: string, net: RealNodeLayout): string[] {
  return [...linkList.matchAll(/^\d+: (ec\d+-br)[:@]/gm)]
    .map((m) => m[1] ?? '')
    .filter((b) => b !== net.bridge);
}

async function restoreIpForward(net: RealNodeLayout): Promise<void> {
  if (!existsSync(IP_FORWARD_ORIGINAL)) return;
  const original = readFileSync(IP_FORWARD_ORIGINAL, 'utf8').trim();
  const links = await sh('ip', ['-o', 'link', 'show', 'type', 'bridge']).catch(() => '');
  const value = ipForwardOnDown({ original, otherBridges: otherStackBridges(links, net) });
  if (value === undefined) return;
  writeFileSync(IP_FORWARD, `${value}\n`);
  rmSync(IP_FORWARD_ORIGINAL, { force: true });
}

/** Idempotent: deleting a namespace destroys its veth ends and everything inside it (CNI bridge, kubelet's iptables chains). */
export async function deleteNodeNetwork(net: RealNodeLayout): Promise<void> {
  await shQuiet('ip', ['route', 'del', net.serviceCidr]);
  for (const node of net.nodes) {
    await shQuiet('ip', ['route', 'del', node.podCidr]);
    if (existsSync(`/run/netns/${node.netns}`)) await shQuiet('ip', ['netns', 'del', node.netns]);
    await shQuiet('ip', ['link', 'del', node.hostVeth]);
  }
  await shQuiet('ip', ['link', 'del', net.bridge]);
  for (const rule of confineRules(net)) while (await shQuiet('iptables', ['-w', '-D', ...rule]));
  await restoreIpForward(net);
}

/** What of this stack's network is still on the host; empty after deleteNodeNetwork. */
export async function leftoverNetwork(net: RealNodeLayout): Promise<string[]> {
  const links = await sh('ip', ['-o', 'link', 'show']);
  const left: string[] = [];
  for (const name of [net.bridge, ...net.nodes.map((n) => n.hostVeth)])
    if (new RegExp(`^\\d+: ${name}[:@]`, 'm').test(links)) left.push(`link ${name}`);
  for (const n of net.nodes) if (existsSync(`/run/netns/${n.netns}`)) left.push(`netns ${n.netns}`);
  const rules = await sh('iptables-save', []).catch(() => '');
  if (rules.includes(`etcd-conductor ${net.prefix}"`))
    left.push(`iptables rules tagged "etcd-conductor ${net.prefix}"`);
  return left;
}
