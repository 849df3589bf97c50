// `up` twice then `down` on a real-node stack of its own (its own state folder, host IP and node network): the second
// `up` finds the first, and `down` leaves no process, listening port, mount, cgroup, volume, network namespace, link,
// route, /etc/hosts block or nftables rule of the stack behind (issue 14). It must be a stack of its own: it checks what
// `down` leaves, which the default stack the other files share cannot show.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findStackProcesses, listeningPorts } from '../../localcluster/process-scan';
import { hostsStackId } from '../../localcluster/real-nodes/host-names';
import { realNodeLayout } from '../../localcluster/real-nodes/real-node-layout';
import { realNodeLeftovers } from '../../localcluster/real-nodes/real-nodes';
import { readStackInfo, repoRoot } from '../../localcluster/stack-info';
import { stackLayout } from '../../localcluster/stack-layout';
import { pidAlive } from '../../localcluster/tools';

const run = promisify(execFile);
/** B = 77: node network 10.77.0.0/24 and names ec77-*, apart from every other stack. */
const HOST_IP = '127.77.0.1';

/**
 * Every nftables rule on the host. This machine's iptables is the nf_tables variant, so iptables-save lists the
 * nftables rules in the tables iptables manages; `nft list ruleset` (when the nft command is installed) lists the rest.
 */
async function nftablesRules(): Promise<string> {
  const out: string[] = [];
  for (const [cmd, args] of [
    ['iptables-save', []],
    ['ip6tables-save', []],
    ['nft', ['list', 'ruleset']],
  ] as Array<[string, string[]]>) {
    try {
      out.push((await run(cmd, args, { maxBuffer: 20 << 20 })).stdout);
    } catch (e) {
      // A command that is not installed has no rules to show; any other failure is the test's to report.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  return out.join('\n');
}

/** A claim of the default StorageClass (local-path binds on first use) and a Pod that writes to it. */
const claimAndWriter = {
  apiVersion: 'v1',
  kind: 'List',
  items: [
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'kept', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'keeper', namespace: 'default' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'writer',
            image: 'quay.io/coreos/etcd:v3.6.16',
            command: ['sh', '-c', 'echo kept > /data/kept && exec sleep 3600'],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          },
        ],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'kept' } }],
      },
    },
  ],
};

describe('a real-node stack of its own: up, up again, down', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'etcd-conductor-stack-'));
  const layout = stackLayout({ repoRoot: repoRoot(), stateDir, hostIp: HOST_IP });
  const net = realNodeLayout(layout);
  const main = join(repoRoot(), 'dist', 'localcluster', 'main.js');
  const cli = (command: string) =>
    run(
      process.execPath,
      [main, command, '--state-dir', stateDir, '--host-ip', HOST_IP, '--no-operator', '--no-cert-manager'],
      { timeout: 280000, maxBuffer: 10 << 20 },
    );
  afterAll(async () => {
    await cli('down').catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }, 120000);

  it('comes up, stays up on a second up, and goes away completely on down', async () => {
    const rulesBefore = await nftablesRules();
    expect(rulesBefore).not.toContain(`etcd-conductor ${net.prefix}`);

    const first = await cli('up');
    expect(first.stdout).toMatch(/up: ready in/);
    const info = readStackInfo(join(stateDir, 'stack.json'));
    expect(info?.phase).toBe('ready');
    expect(info?.hostIp).toBe(HOST_IP);
    expect(info?.nodeRuntime).toBe('real');
    expect(listeningPorts(HOST_IP)).toEqual(expect.arrayContaining([6443]));
    // What down must remove is there while the stack runs: so the checks below cannot pass for want of a stack.
    expect(readdirSync('/run/netns').filter((n) => n.startsWith(`${net.prefix}-`))).toHaveLength(3);
    expect(await nftablesRules()).toContain(`etcd-conductor ${net.prefix}`);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).toContain(stateDir);
    const nodePids = Object.entries(info?.pids ?? {}).filter(([name]) =>
      /^(kubelet|containerd)-node-/.test(name),
    );
    expect(nodePids).toHaveLength(6);

    // A claim of the default StorageClass, bound and written by a Pod: its volume is a folder of its node's own.
    const kubectl = (args: string[], input?: string) =>
      new Promise<string>((resolve, reject) => {
        const child = execFile(
          info?.tools.kubectl ?? 'kubectl',
          ['--kubeconfig', join(stateDir, 'kubeconfig'), ...args],
          (err, stdout) => (err ? reject(err) : resolve(stdout)),
        );
        child.stdin?.end(input ?? '');
      });
    await kubectl(['apply', '-f', '-'], JSON.stringify(claimAndWriter));
    const deadline = Date.now() + 180000;
    while ((await kubectl(['get', 'pod', 'keeper', '-o', 'jsonpath={.status.phase}'])).trim() !== 'Running') {
      if (Date.now() > deadline) throw new Error('the Pod on the claim was not Running within 180 s');
      await new Promise((r) => setTimeout(r, 1000));
    }
    const volumeDirs = () =>
      net.nodes.filter((n) => existsSync(n.volumesDir) && readdirSync(n.volumesDir).length > 0);
    expect(volumeDirs()).toHaveLength(1);

    const second = await cli('up');
    expect(second.stdout).toMatch(/up: already running/);
    expect(readStackInfo(join(stateDir, 'stack.json'))?.ownerPid).toBe(info?.ownerPid);

    const down = await cli('down');
    expect(down.stdout).toMatch(/down: stack in .* stopped/);
    // The daemon stops everything itself; down reports anything it had to kill or could not remove, and there is none.
    expect(down.stdout).not.toMatch(/killed|could not remove/);

    // Processes: the daemon, every server and every container the nodes ran.
    expect(findStackProcesses(stateDir, undefined)).toEqual([]);
    for (const pid of [info?.ownerPid ?? 0, ...Object.values(info?.pids ?? {})])
      expect(pidAlive(pid)).toBe(false);
    expect(listeningPorts(HOST_IP)).toEqual([]);
    expect(listeningPorts(net.bridgeIp)).toEqual([]);
    // Mounts, cgroups, volumes and the node network as the stack's own teardown sees them...
    expect(await realNodeLeftovers(layout)).toEqual([]);
    expect(volumeDirs()).toEqual([]);
    // ...and as the host sees them.
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(stateDir);
    const netns = existsSync('/run/netns') ? readdirSync('/run/netns') : [];
    expect(netns.filter((n) => n.startsWith(`${net.prefix}-`))).toEqual([]);
    expect((await run('ip', ['-o', 'link', 'show'])).stdout).not.toMatch(new RegExp(`: ${net.prefix}-`));
    expect((await run('ip', ['route', 'show'])).stdout).not.toMatch(/^10\.77\./m);
    expect(readFileSync('/etc/hosts', 'utf8')).not.toContain(
      `etcd-conductor stack ${hostsStackId(stateDir)}`,
    );
    const rulesAfter = await nftablesRules();
    expect(rulesAfter).not.toContain(`etcd-conductor ${net.prefix}`);
    expect(rulesAfter).not.toContain(net.bridge);
    expect(rulesAfter).not.toMatch(/10\.77\./);
  }, 400000);
});
