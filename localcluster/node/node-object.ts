// Describes this machine as a Kubernetes Node: labels, addresses, capacity and the conditions a healthy kubelet reports.

export interface NodeFacts {
  nodeName: string;
  zone: string;
  hostIp: string;
  cpuCores: number;
  memoryBytes: number;
  maxPods: number;
  kubeletVersion: string;
  kernelVersion: string;
  architecture: string;
  bootId: string;
  machineId: string;
}

export function nodeLabels(f: Pick<NodeFacts, 'nodeName' | 'zone' | 'architecture'>): Record<string, string> {
  return {
    'kubernetes.io/hostname': f.nodeName,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': f.architecture,
    'topology.kubernetes.io/zone': f.zone,
    'node.etcd-conductor.io/process-backed': 'true',
  };
}

/** Go's architecture names, which Kubernetes uses in labels and nodeInfo. */
export function goArch(nodeArch: string): string {
  return (
    ({ x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm' } as Record<string, string>)[nodeArch] ??
    nodeArch
  );
}

function resources(f: NodeFacts): Record<string, string> {
  return {
    cpu: String(f.cpuCores),
    memory: `${Math.floor(f.memoryBytes / 1024)}Ki`,
    pods: String(f.maxPods),
    'ephemeral-storage': '100Gi',
  };
}

/**
 * The Node status body a kubelet posts. Ready=True with a fresh heartbeat; the pressure conditions False;
 * transition times are `readySince`, so they move only when the node (re)becomes ready.
 */
export function nodeStatus(f: NodeFacts, now: string, readySince: string): Record<string, unknown> {
  const condition = (
    type: string,
    status: 'True' | 'False',
    reason: string,
    message: string,
  ): Record<string, string> => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: now,
    lastTransitionTime: readySince,
  });
  return {
    capacity: resources(f),
    allocatable: resources(f),
    addresses: [
      { type: 'InternalIP', address: f.hostIp },
      { type: 'Hostname', address: f.nodeName },
    ],
    conditions: [
      condition(
        'MemoryPressure',
        'False',
        'KubeletHasSufficientMemory',
        'kubelet has sufficient memory available',
      ),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'process-backed kubelet is posting ready status'),
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
    nodeInfo: {
      machineID: f.machineId,
      systemUUID: f.machineId,
      bootID: f.bootId,
      kernelVersion: f.kernelVersion,
      osImage: 'etcd-conductor process node',
      containerRuntimeVersion: 'process://1.0.0',
      kubeletVersion: f.kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: f.architecture,
    },
  };
}

/** Lease renewTime is a MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
