// Renders and splices one stack's managed block of /etc/hosts; lines outside the block are never touched.

export interface HostEntry {
  ip: string;
  name: string;
}

export function blockMarkers(stackId: string): { begin: string; end: string } {
  return { begin: `# BEGIN etcd-conductor stack ${stackId}`, end: `# END etcd-conductor stack ${stackId}` };
}

/** One line per address, names sorted, so equal inputs render equal blocks (and no rewrite happens). */
export function renderHostsBlock(stackId: string, entries: HostEntry[]): string {
  const { begin, end } = blockMarkers(stackId);
  const byIp = new Map<string, Set<string>>();
  for (const e of entries) byIp.set(e.ip, (byIp.get(e.ip) ?? new Set()).add(e.name));
  const ipKey = (ip: string): string =>
    ip
      .split('.')
      .map((o) => o.padStart(3, '0'))
      .join('.');
  const lines = [...byIp.keys()]
    .sort((a, b) => ipKey(a).localeCompare(ipKey(b)))
    .map((ip) => `${ip}\t${[...(byIp.get(ip) ?? [])].sort().join(' ')}`);
  return [begin, ...lines, end].join('\n');
}

/** Replaces the stack's block (or appends it); `block` undefined removes it. Other stacks' blocks stay. */
export function spliceHostsBlock(current: string, stackId: string, block: string | undefined): string {
  const { begin, end } = blockMarkers(stackId);
  const lines = current.split('\n');
  const start = lines.indexOf(begin);
  const stop = start >= 0 ? lines.indexOf(end, start) : -1;
  let kept = start >= 0 && stop >= 0 ? [...lines.slice(0, start), ...lines.slice(stop + 1)] : lines;
  while (kept.length > 0 && kept[kept.length - 1] === '') kept = kept.slice(0, -1);
  const body = block === undefined ? kept : [...kept, block];
  return body.join('\n') + '\n';
}
