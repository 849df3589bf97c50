// Which stack owns a real-node network. The network's names (bridge ecB-br, namespaces ecB-node-*) derive from the
// host IP alone, not from the stack's folder, so a `down` or an `up` in another folder with the same host IP (the
// default 127.0.0.1, say, because --host-ip was forgotten) would otherwise tear down a running stack's network: it
// happened, and every node of the running stack went NotReady at once. Each stack that builds real nodes records that
// in its own folder; only that folder may tear the network down, and `up` refuses a network another folder owns.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StackLayout } from '../stack-layout';

export interface NetworkOwnerRecord {
  hostIp: string;
  prefix: string;
}

export const ownerFile = (stateDir: string) => join(stateDir, 'real-nodes.json');

export function readOwner(stateDir: string): NetworkOwnerRecord | undefined {
  const file = ownerFile(stateDir);
  if (!existsSync(file)) return undefined;
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as Partial<NetworkOwnerRecord>;
    return typeof r.hostIp === 'string' && typeof r.prefix === 'string'
      ? { hostIp: r.hostIp, prefix: r.prefix }
      : undefined;
  } catch {
    return undefined;
  }
}

export function recordOwner(layout: StackLayout, prefix: string): void {
  writeFileSync(ownerFile(layout.stateDir), `${JSON.stringify({ hostIp: layout.hostIp, prefix })}\n`);
}

export function forgetOwner(stateDir: string): void {
  rmSync(ownerFile(stateDir), { force: true });
}

export type StartDecision = { action: 'build' } | { action: 'refuse'; message: string };

/**
 * Pure: may this folder build its real-node network? A bridge of its prefix that this folder has no record of belongs
 * to another folder's stack (running, or crashed and never downed): refuse, naming the bridge and what to do.
 * A bridge this folder recorded is its own leftover (a crashed daemon): clean it up and build.
 */
export function startDecision(input: {
  bridge: string;
  bridgeExists: boolean;
  recorded: NetworkOwnerRecord | undefined;
  prefix: string;
  hostIp: string;
  stateDir: string;
}): StartDecision {
  if (!input.bridgeExists) return { action: 'build' };
  if (input.recorded?.prefix === input.prefix) return { action: 'build' };
  return {
    action: 'refuse',
    message:
      `host IP ${input.hostIp}: the real-node network ${input.bridge} exists but was not made by the stack in ` +
      `${input.stateDir}; another stack (another folder) uses this host IP. Run \`down\` in that folder, or start ` +
      `this one with another --host-ip.`,
  };
}
