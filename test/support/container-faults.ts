// Container and claim faults for the journeys, on the stack's real nodes: the container's own cgroup (SIGKILL to its
// processes, as a crash; the cgroup v1 freezer, as a hang) and the claim's volume folder on the host (emptied in place,
// as a wiped disk).
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { claimName } from '../../crds/names';
import type { Harness } from './cluster-harness';

export interface ContainerFaults {
  /** The container's processes die at once; the kubelet restarts it in the same Pod. */
  crashContainer(namespace: string, pod: string, container: string): Promise<void>;
  /** The container stops running (and answering) until thawed; its Pod stays Running. */
  freezeContainer(namespace: string, pod: string, container: string): Promise<void>;
  thawContainer(namespace: string, pod: string, container: string): Promise<void>;
  /** The claim's data is emptied in place under whatever runs on it, as a disk replaced under a node would be. */
  wipeClaim(namespace: string, claim: string): Promise<void>;
}

/** What the faults need of a stack: a Harness has it, and so has a test that holds its own API client. */
export type FaultTarget = Pick<Harness, 'core' | 'stack'>;

export function containerFaults(h: FaultTarget): ContainerFaults {
  return {
    crashContainer: async (ns, pod, container) => {
      const dir = await containerCgroup(h, 'freezer', ns, pod, container);
      for (const pid of pidsOf(dir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone with its siblings.
        }
      }
    },
    freezeContainer: async (ns, pod, container) =>
      setFreezer(await containerCgroup(h, 'freezer', ns, pod, container), 'FROZEN'),
    thawContainer: async (ns, pod, container) =>
      setFreezer(await containerCgroup(h, 'freezer', ns, pod, container), 'THAWED'),
    wipeClaim: async (ns, claim) => emptyFolder(await claimFolder(h, ns, claim)),
  };
}

/**
 * Members' data lost for good, with no moment in which the operator could act on half of it: their etcd containers
 * are frozen first, so they stop answering and no membership change can commit while the rest is done; then their
 * claims are deleted (Terminating while their Pods run, so no Pod starts on them again); then their Pods, with no
 * grace (the runtime kills the frozen processes). Without the freeze a Pod deleted with no grace runs on until its
 * node notices, while the operator already sees its claim gone and removes it, as a lost member, from a quorum that
 * still answers: the quorum is then never lost.
 */
export async function loseMembersForGood(
  h: FaultTarget,
  namespace: string,
  members: string[],
): Promise<void> {
  const faults = containerFaults(h);
  await Promise.all(members.map((m) => faults.freezeContainer(namespace, m, 'etcd')));
  await Promise.all(
    members.map((m) => h.core.deleteNamespacedPersistentVolumeClaim({ namespace, name: claimName(m) })),
  );
  await Promise.all(
    members.map((m) => h.core.deleteNamespacedPod({ namespace, name: m, gracePeriodSeconds: 0 })),
  );
}

/**
 * The host folder of a claim's volume on real nodes: the default StorageClass (local-path) binds a claim to a volume
 * whose path is a folder in its node's own directory of the stack, which the host sees as it is.
 */
async function claimFolder(h: FaultTarget, namespace: string, claim: string): Promise<string> {
  const pvc = await h.core.readNamespacedPersistentVolumeClaim({ namespace, name: claim });
  const volume = pvc.spec?.volumeName;
  if (!volume) throw new Error(`claim ${namespace}/${claim} is not bound`);
  const pv = await h.core.readPersistentVolume({ name: volume });
  const dir = pv.spec?.hostPath?.path ?? pv.spec?.local?.path;
  if (!dir || !existsSync(dir))
    throw new Error(`volume ${volume} of ${namespace}/${claim} has no folder on this host`);
  return dir;
}

function emptyFolder(dir: string): void {
  for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
}

const CGROUPS = '/sys/fs/cgroup';
/** Where the kubelet's cgroupfs driver puts a Pod under a node's cgroupRoot, by QoS class. */
const QOS_DIRS = ['kubepods', 'kubepods/burstable', 'kubepods/besteffort'];

/**
 * The container's cgroup in one v1 hierarchy. Every real node of this stack has its own cgroupRoot named after the
 * stack's prefix (localcluster/real-nodes/real-node-layout.ts: /etcd-conductor-ec<B>-<node>, B the host IP's second
 * octet), so the container is found without asking the node's runtime.
 */
async function containerCgroup(
  h: FaultTarget,
  hierarchy: string,
  namespace: string,
  pod: string,
  container: string,
): Promise<string> {
  const p = await h.core.readNamespacedPod({ namespace, name: pod });
  const status = p.status?.containerStatuses?.find((c) => c.name === container);
  const id = status?.containerID?.replace(/^[a-z]+:\/\//, '');
  if (!id || !p.metadata?.uid) throw new Error(`${namespace}/${pod} has no running container ${container}`);
  const rootPrefix = `etcd-conductor-ec${h.stack.hostIp.split('.')[1] ?? ''}-`;
  const base = join(CGROUPS, hierarchy);
  for (const root of readdirSync(base).filter((d) => d.startsWith(rootPrefix))) {
    for (const qos of QOS_DIRS) {
      const dir = join(base, root, qos, `pod${p.metadata.uid}`, id);
      if (existsSync(dir)) return dir;
    }
  }
  throw new Error(
    `no ${hierarchy} cgroup for container ${id} of ${namespace}/${pod} under ${base}/${rootPrefix}*`,
  );
}

function pidsOf(cgroupDir: string): number[] {
  return readFileSync(join(cgroupDir, 'cgroup.procs'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(Number);
}

function setFreezer(cgroupDir: string, state: 'FROZEN' | 'THAWED'): void {
  writeFileSync(join(cgroupDir, 'freezer.state'), state);
}
