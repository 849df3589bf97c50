// Manifests for the local-stack e2e tests: etcd 3.6 members addressed by their DNS names, as the operator will run them.
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { StackInfo } from '../../localcluster/stack-info';

const run = promisify(execFile);

export const ETCD_IMAGE = 'quay.io/coreos/etcd:v3.6.16';

export interface MemberSpec {
  namespace: string;
  name: string;
  subdomain: string;
  members: string[];
  claim?: string;
  nodeName?: string;
}

export const dnsName = (m: { name: string; subdomain: string; namespace: string }) =>
  `${m.name}.${m.subdomain}.${m.namespace}.svc`;

export function etcdMemberPod(m: MemberSpec): V1Pod {
  const peer = (name: string) => `http://${dnsName({ ...m, name })}:2380`;
  return {
    metadata: { name: m.name, labels: { app: m.subdomain } },
    spec: {
      hostname: m.name,
      subdomain: m.subdomain,
      ...(m.nodeName ? { nodeName: m.nodeName } : {}),
      containers: [
        {
          name: 'etcd',
          image: ETCD_IMAGE,
          command: ['etcd'],
          env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
          args: [
            `--name=${m.name}`,
            '--data-dir=/var/lib/etcd/data',
            '--listen-client-urls=http://$(POD_IP):2379',
            `--advertise-client-urls=http://${dnsName(m)}:2379`,
            '--listen-peer-urls=http://$(POD_IP):2380',
            `--initial-advertise-peer-urls=${peer(m.name)}`,
            `--initial-cluster=${m.members.map((n) => `${n}=${peer(n)}`).join(',')}`,
            `--initial-cluster-token=${m.namespace}-${m.subdomain}`,
          ],
          ports: [
            { name: 'client', containerPort: 2379 },
            { name: 'peer', containerPort: 2380 },
          ],
          readinessProbe: { httpGet: { path: '/readyz', port: 2379 }, periodSeconds: 1 },
          volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
        },
      ],
      volumes: [
        m.claim
          ? { name: 'data', persistentVolumeClaim: { claimName: m.claim } }
          : { name: 'data', emptyDir: {} },
      ],
    },
  };
}

export function headlessService(name: string): V1Service {
  return {
    metadata: { name },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { app: name },
      ports: [
        { name: 'client', port: 2379 },
        { name: 'peer', port: 2380 },
      ],
    },
  };
}

export function clientService(name: string, app: string): V1Service {
  return { metadata: { name }, spec: { selector: { app }, ports: [{ name: 'client', port: 2379 }] } };
}

/** Runs the stack's etcdctl 3.6 against an endpoint; resolves to stdout. */
export async function etcdctl(info: StackInfo, endpoint: string, ...args: string[]): Promise<string> {
  const bin = join(info.tools.etcdBinDirs['3.6.16'] ?? '', 'etcdctl');
  const { stdout } = await run(
    bin,
    [`--endpoints=${endpoint}`, '--dial-timeout=2s', '--command-timeout=5s', ...args],
    { timeout: 15000 },
  );
  return stdout;
}

export const isReady = (pod: V1Pod) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
