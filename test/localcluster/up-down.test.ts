// `up` twice then `down` on a second stack instance (its own state folder and host IP) leaves no process and no listening port behind.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findStackProcesses, listeningPorts } from '../../localcluster/process-scan';
import { readStackInfo } from '../../localcluster/stack-info';
import { repoRoot } from '../../localcluster/stack-info';
import { pidAlive } from '../../localcluster/tools';

const run = promisify(execFile);
const HOST_IP = '127.77.0.1';
/** MinIO also listens on 127.0.0.1 at the instance's S3 ports, and Temporal only there (see stack-layout.ts). */
const MINIO_LOOPBACK_PORTS = [9154, 9155];
const TEMPORAL_PORTS = [7233 + 4 * 77, 8233 + 4 * 77];

describe('a second stack instance: up, up again, down', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'etcd-conductor-stack-'));
  const main = join(repoRoot(), 'dist', 'localcluster', 'main.js');
  const cli = (command: string) =>
    run(process.execPath, [main, command, '--state-dir', stateDir, '--host-ip', HOST_IP, '--no-operator'], {
      timeout: 280000,
      maxBuffer: 10 << 20,
    });
  afterAll(async () => {
    await cli('down').catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }, 120000);

  it('comes up, stays up on a second up, and goes away completely on down', async () => {
    const first = await cli('up');
    expect(first.stdout).toMatch(/up: ready in/);
    const info = readStackInfo(join(stateDir, 'stack.json'));
    expect(info?.phase).toBe('ready');
    expect(info?.hostIp).toBe(HOST_IP);
    expect(listeningPorts(HOST_IP)).toEqual(expect.arrayContaining([2399, 6443, 9154]));
    expect(listeningPorts('127.0.0.1')).toEqual(expect.arrayContaining(TEMPORAL_PORTS));

    const second = await cli('up');
    expect(second.stdout).toMatch(/up: already running/);
    expect(readStackInfo(join(stateDir, 'stack.json'))?.ownerPid).toBe(info?.ownerPid);

    const down = await cli('down');
    expect(down.stdout).toMatch(/down: stack in .* stopped/);
    // The daemon stops everything itself; down reports anything it had to kill, and there should be nothing.
    expect(down.stdout).not.toMatch(/killed/);
    expect(findStackProcesses(stateDir, undefined)).toEqual([]);
    for (const pid of [info?.ownerPid ?? 0, ...Object.values(info?.pids ?? {})])
      expect(pidAlive(pid)).toBe(false);
    expect(listeningPorts(HOST_IP)).toEqual([]);
    expect(
      listeningPorts('127.0.0.1').filter((p) => [...MINIO_LOOPBACK_PORTS, ...TEMPORAL_PORTS].includes(p)),
    ).toEqual([]);
    for (const n of info?.nodes ?? []) expect(listeningPorts(n.hostIp)).toEqual([]);
  }, 300000);
});
