// Runs one probe attempt (httpGet, tcpSocket, exec) against a container; every attempt ends within its timeout.
import { spawn } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { V1ContainerPort, V1Probe } from '@kubernetes/client-node';

export interface ProbeTarget {
  podIp: string;
  ports: V1ContainerPort[];
  /** Pid of the container's main process: exec probes run in its mount namespace. */
  pid: number;
  env: Record<string, string>;
  /** Resolves an exec probe's command the way the container's own command is resolved. */
  resolveArgv: (command: string[]) => string[] | undefined;
}

export interface ProbeOutcome {
  ok: boolean;
  message?: string;
}

export function resolvePort(port: number | string, ports: V1ContainerPort[]): number | undefined {
  if (typeof port === 'number') return port;
  if (/^[0-9]+$/.test(port)) return Number(port);
  return ports.find((p) => p.name === port)?.containerPort;
}

function httpProbe(
  probe: NonNullable<V1Probe['httpGet']>,
  target: ProbeTarget,
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const port = resolvePort(probe.port as number | string, target.ports);
  if (port === undefined)
    return Promise.resolve({ ok: false, message: `unknown port ${String(probe.port)}` });
  const secure = (probe.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
  const headers: Record<string, string> = { 'User-Agent': 'kube-probe/1.35' };
  for (const h of probe.httpHeaders ?? []) headers[h.name] = h.value;
  return new Promise((resolve) => {
    const req = (secure ? https : http).request(
      {
        host: probe.host ?? target.podIp,
        port,
        path: probe.path ?? '/',
        method: 'GET',
        headers,
        timeout: timeoutMs,
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(
          code >= 200 && code < 400
            ? { ok: true }
            : { ok: false, message: `HTTP probe failed with statuscode: ${code}` },
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) =>
      resolve({
        ok: false,
        message: `Get "${secure ? 'https' : 'http'}://${probe.host ?? target.podIp}:${port}${probe.path ?? '/'}": ${e.message}`,
      }),
    );
    req.end();
  });
}

function tcpProbe(
  probe: NonNullable<V1Probe['tcpSocket']>,
  target: ProbeTarget,
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const port = resolvePort(probe.port as number | string, target.ports);
  if (port === undefined)
    return Promise.resolve({ ok: false, message: `unknown port ${String(probe.port)}` });
  return new Promise((resolve) => {
    const socket = net.connect({ host: probe.host ?? target.podIp, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve({ ok: true });
    });
    socket.once('timeout', () => socket.destroy(new Error('timeout')));
    socket.once('error', (e) =>
      resolve({ ok: false, message: `dial tcp ${probe.host ?? target.podIp}:${port}: ${e.message}` }),
    );
  });
}

function execProbe(command: string[], target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
  const argv = target.resolveArgv(command);
  if (argv === undefined || argv.length === 0)
    return Promise.resolve({
      ok: false,
      message: `exec: "${command[0] ?? ''}": executable file not found in $PATH`,
    });
  return new Promise((resolve) => {
    const child = spawn('/usr/bin/nsenter', ['-t', String(target.pid), '-m', '--', ...argv], {
      env: target.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      resolve({ ok: false, message: `command timed out after ${timeoutMs}ms` });
    }, timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ ok: false, message: e.message });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve(
        code === 0
          ? { ok: true }
          : { ok: false, message: output.trim().slice(0, 500) || `exit code ${code}` },
      );
    });
  });
}

export function runProbe(probe: V1Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
  if (probe.httpGet) return httpProbe(probe.httpGet, target, timeoutMs);
  if (probe.tcpSocket) return tcpProbe(probe.tcpSocket, target, timeoutMs);
  if (probe.exec) return execProbe(probe.exec.command ?? [], target, timeoutMs);
  if (probe.grpc) return tcpProbe({ port: probe.grpc.port }, target, timeoutMs);
  return Promise.resolve({ ok: false, message: 'probe has no handler' });
}
