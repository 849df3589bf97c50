// Real multi-member etcd 3.6 on free loopback ports for unit tests of what etcd itself does with membership
// changes (add, promote, remove, move leader), and an EtcdAdmin that reaches it under the names the
// activities derive (member DNS names), so activities run unchanged against it.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryPath, cacheRoot, ETCD_TOOLS } from '../../localcluster/tool-cache';
import type { EtcdAdmin, EtcdMember } from '../../activities/etcd-admin';
import { withEtcdClient } from '../../activities/etcd-admin';
import { freePort } from './local-etcd';

export interface LocalMember {
  name: string;
  clientURL: string;
  peerURL: string;
}

export interface LocalEtcdCluster {
  /** Every member started so far, by name. */
  members: Map<string, LocalMember>;
  /** Ports for a member that does not run yet (its peer URL is what MemberAddAsLearner is given). */
  reserve(name: string): Promise<LocalMember>;
  /** Starts a reserved member that etcd already lists (as a learner), joining the running cluster. */
  join(name: string): Promise<void>;
  /** Kills every process and removes the data directories. */
  stop(): void;
}

const ETCD = () => binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcd');

async function answers(url: string, timeoutMs: number, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await withEtcdClient({ callTimeoutMs: 2000 }, [url], (c) => c.maintenance.status());
      return;
    } catch (err) {
      const why = exited();
      if (why || Date.now() > deadline) throw why ? new Error(why, { cause: err }) : err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Starts `names.length` voters as one new cluster and resolves once each answers a status call. */
export async function startLocalEtcdCluster(
  prefix: string,
  names: string[],
  timeoutMs = 60_000,
): Promise<LocalEtcdCluster> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const members = new Map<string, LocalMember>();
  const reserved = new Map<string, LocalMember>();
  const procs: ChildProcess[] = [];
  const exits = new Map<string, string>();

  async function reserve(name: string): Promise<LocalMember> {
    const [port, peerPort] = [await freePort(), await freePort()];
    const m = { name, clientURL: `http://127.0.0.1:${port}`, peerURL: `http://127.0.0.1:${peerPort}` };
    reserved.set(name, m);
    return m;
  }

  function spawnMember(m: LocalMember, initialCluster: string, state: 'new' | 'existing') {
    const proc = spawn(
      ETCD(),
      [
        `--name=${m.name}`,
        `--data-dir=${join(dir, m.name)}`,
        `--listen-client-urls=${m.clientURL}`,
        `--advertise-client-urls=${m.clientURL}`,
        `--listen-peer-urls=${m.peerURL}`,
        `--initial-advertise-peer-urls=${m.peerURL}`,
        `--initial-cluster=${initialCluster}`,
        `--initial-cluster-state=${state}`,
        '--heartbeat-interval=50',
        '--election-timeout=500',
      ],
      { stdio: 'ignore' },
    );
    proc.on('exit', (code, signal) => exits.set(m.name, `etcd ${m.name} exited (${code ?? signal})`));
    procs.push(proc);
    members.set(m.name, m);
  }

  const stop = () => {
    for (const p of procs) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const initial = await Promise.all(names.map(reserve));
    const initialCluster = initial.map((m) => `${m.name}=${m.peerURL}`).join(',');
    for (const m of initial) spawnMember(m, initialCluster, 'new');
    await Promise.all(initial.map((m) => answers(m.clientURL, timeoutMs, () => exits.get(m.name))));
  } catch (err) {
    stop();
    throw err;
  }

  return {
    members,
    reserve,
    async join(name) {
      const m = reserved.get(name);
      if (!m) throw new Error(`${name} was not reserved`);
      const all = [...members.values(), m].map((x) => `${x.name}=${x.peerURL}`).join(',');
      spawnMember(m, all, 'existing');
      await answers(m.clientURL, timeoutMs, () => exits.get(name));
    },
    stop,
  };
}

/**
 * The real EtcdAdmin with URLs translated both ways, as the cluster's DNS would: `toLocal` maps a URL the
 * activities derive (client or peer) to the local process's, and answers come back under the derived names.
 */
export function translatedEtcdAdmin(real: EtcdAdmin, urls: Map<string, string>): EtcdAdmin {
  const back = new Map([...urls].map(([derived, local]) => [local, derived]));
  const toLocal = (u: string) => urls.get(u) ?? u;
  const toDerived = (u: string) => back.get(u) ?? u;
  const member = (m: EtcdMember): EtcdMember => ({
    ...m,
    peerURLs: m.peerURLs.map(toDerived),
    clientURLs: m.clientURLs.map(toDerived),
  });
  const local = (endpoints: string[]) => endpoints.map(toLocal);
  return {
    listMembers: async (e) => (await real.listMembers(local(e))).map(member),
    listMembersWithHeader: async (e) => {
      const r = await real.listMembersWithHeader(local(e));
      return { clusterId: r.clusterId, members: r.members.map(member) };
    },
    addLearner: async (e, peerURL) => {
      const r = await real.addLearner(local(e), toLocal(peerURL));
      return r === 'not-ready' ? r : { member: member(r.member), members: r.members.map(member) };
    },
    promote: (e, id) => real.promote(local(e), id),
    remove: (e, id) => real.remove(local(e), id),
    moveLeader: (e, id) => real.moveLeader(toLocal(e), id),
    status: async (e, t) => ({ ...(await real.status(toLocal(e), t)), endpoint: e }),
    alarms: (e) => real.alarms(local(e)),
    disarmNoSpace: (e, id) => real.disarmNoSpace(local(e), id),
    compactToCurrent: (e) => real.compactToCurrent(local(e)),
    defragment: (e, t) => real.defragment(toLocal(e), t),
    hashKV: (e, r, t) => real.hashKV(toLocal(e), r, t),
  };
}
