// Bench section for the local stack: warm `up` time (tools cached) and etcd Pod created -> Ready, on a throw-away instance so a running default stack is left alone.
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readStackInfo, repoRoot } from '../localcluster/stack-info';
import type { BenchSection, Figure } from './section';
import { median } from './section';

const run = promisify(execFile);
const HOST_IP = '127.88.0.1';

function etcdPod(name: string): V1Pod {
  return {
    metadata: { name },
    spec: {
      containers: [
        {
          name: 'etcd',
          image: 'quay.io/coreos/etcd:v3.6.16',
          env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
          command: ['etcd'],
          args: [
            `--name=${name}`,
            '--data-dir=/var/lib/etcd',
            '--listen-client-urls=http://$(POD_IP):2379',
            '--advertise-client-urls=http://$(POD_IP):2379',
            '--listen-peer-urls=http://$(POD_IP):2380',
            '--initial-advertise-peer-urls=http://$(POD_IP):2380',
            `--initial-cluster=${name}=http://$(POD_IP):2380`,
          ],
          volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
          readinessProbe: { httpGet: { path: '/readyz', port: 2379 }, periodSeconds: 1 },
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  };
}

async function podCreatedToReady(
  core: CoreV1Api,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<number | undefined> {
  const t0 = Date.now();
  await core.createNamespacedPod({ namespace, body: etcdPod(name) });
  while (Date.now() - t0 < timeoutMs) {
    const pod = await core.readNamespacedPod({ namespace, name });
    if (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 25));
  }
  return undefined;
}

export const localStackSection: BenchSection = {
  name: 'local-stack',
  async run(log) {
    const stateDir = mkdtempSync(join(tmpdir(), 'etcd-conductor-bench-'));
    const main = join(repoRoot(), 'dist', 'localcluster', 'main.js');
    const cli = async (command: string) => {
      const t0 = Date.now();
      await run(
        process.execPath,
        [main, command, '--state-dir', stateDir, '--host-ip', HOST_IP, '--no-operator'],
        { timeout: 300000, maxBuffer: 10 << 20 },
      );
      return (Date.now() - t0) / 1000;
    };
    const figures: Figure[] = [];
    try {
      log('local-stack: up on a fresh state folder (tools cached)');
      figures.push({
        name: 'up, fresh state folder',
        value: await cli('up'),
        unit: 's',
        note: 'PKI, etcd and Temporal DB created',
      });

      const info = readStackInfo(join(stateDir, 'stack.json'));
      const kc = new KubeConfig();
      kc.loadFromFile(info?.kubeconfig ?? '');
      const core = kc.makeApiClient(CoreV1Api);
      const samples: number[] = [];
      for (let i = 0; i < 3; i++) {
        const ms = await podCreatedToReady(core, 'default', `bench-etcd-${i}`, 60000);
        log(`local-stack: etcd pod ${i} created -> Ready: ${ms ?? 'timeout'} ms`);
        if (ms !== undefined) samples.push(ms);
      }
      figures.push({
        name: 'etcd Pod created -> Ready (median of 3)',
        value: median(samples),
        unit: 'ms',
        note: samples.join(', '),
      });

      await cli('down');
      log('local-stack: warm up (state and tools exist)');
      figures.push({ name: 'warm up', value: await cli('up'), unit: 's', note: 'npm run up minus npm/tsc' });
      figures.push({ name: 'up while already up', value: await cli('up'), unit: 's' });
      figures.push({ name: 'down', value: await cli('down'), unit: 's' });
    } finally {
      await cli('down').catch(() => undefined);
      rmSync(stateDir, { recursive: true, force: true });
    }
    return figures;
  },
};
