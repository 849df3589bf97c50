// Cluster DNS on the real nodes: CoreDNS (built from the Go module proxy, image built here) as a Deployment behind the
// kube-dns Service at the address every kubelet hands Pods as their nameserver, so `<svc>.<ns>.svc.cluster.local`
// and headless per-Pod names resolve inside Pods. It listens on 1053 so it runs as non-root without capabilities.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { COREDNS_IMAGE } from '../images';
import { waitFor } from '../wait-for';

/**
 * Pure: CoreDNS's configuration; with `upstream` (host:port), names outside the cluster domain are forwarded there.
 * Answers for cluster.local are never cached, as in kubeadm's (and so kind's) default Corefile: a member's peer name
 * is asked for before its Pod exists (the operator adds the learner, then creates the Pod), and a cached "no such
 * name" kept the leader from reaching the new member for up to the cache's 5 s (Session 23, scale 3 -> 5).
 */
export function corefile(upstream?: string): string {
  const forward = upstream ? `    forward . ${upstream}\n` : '';
  return `.:1053 {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
${forward}    cache 5 {
        disable success cluster.local
        disable denial cluster.local
    }
    loop
}
`;
}

/** Pure: the add-on's objects, as a v1 List for one `kubectl apply`. */
export function clusterDnsManifests(dnsServiceIp: string, upstream?: string): object {
  const ns = 'kube-system';
  const labels = { 'k8s-app': 'kube-dns' };
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: ns } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'system:coredns' },
        rules: [
          {
            apiGroups: [''],
            resources: ['endpoints', 'services', 'pods', 'namespaces'],
            verbs: ['list', 'watch'],
          },
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'system:coredns' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
        subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: ns }],
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'coredns', namespace: ns },
        data: { Corefile: corefile(upstream) },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'coredns', namespace: ns, labels },
        spec: {
          // Two, on different nodes when there are two, as on kubeadm's clusters: with one, a stopped node could take
          // the cluster's names away with it (Session 21: CoreDNS was on the node node-faults stopped, the operator in
          // its Pods could not resolve the members' names, and the cluster converged ~2 minutes after the node was back,
          // as the gRPC resolver's back-off allowed).
          replicas: 2,
          selector: { matchLabels: labels },
          template: {
            // A changed Corefile (the host's resolver appeared, say) rolls the Pod: CoreDNS reads it only at start.
            metadata: {
              labels,
              annotations: {
                'etcd-conductor.local/corefile-sha256': createHash('sha256')
                  .update(corefile(upstream))
                  .digest('hex'),
              },
            },
            spec: {
              serviceAccountName: 'coredns',
              affinity: {
                podAntiAffinity: {
                  preferredDuringSchedulingIgnoredDuringExecution: [
                    {
                      weight: 100,
                      podAffinityTerm: {
                        labelSelector: { matchLabels: labels },
                        topologyKey: 'kubernetes.io/hostname',
                      },
                    },
                  ],
                },
              },
              // Pods of the DNS server itself must not use it.
              dnsPolicy: 'Default',
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 65532,
                seccompProfile: { type: 'RuntimeDefault' },
              },
              containers: [
                {
                  name: 'coredns',
                  image: COREDNS_IMAGE,
                  imagePullPolicy: 'IfNotPresent',
                  args: ['-conf', '/etc/coredns/Corefile'],
                  ports: [
                    { name: 'dns', containerPort: 1053, protocol: 'UDP' },
                    { name: 'dns-tcp', containerPort: 1053, protocol: 'TCP' },
                  ],
                  readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 1 },
                  livenessProbe: { httpGet: { path: '/health', port: 8080 }, periodSeconds: 10 },
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    readOnlyRootFilesystem: true,
                    capabilities: { drop: ['ALL'] },
                  },
                  volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
                },
              ],
              volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
            },
          },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'kube-dns', namespace: ns, labels },
        spec: {
          clusterIP: dnsServiceIp,
          selector: labels,
          ports: [
            { name: 'dns', port: 53, targetPort: 1053, protocol: 'UDP' },
            { name: 'dns-tcp', port: 53, targetPort: 1053, protocol: 'TCP' },
          ],
        },
      },
    ],
  };
}

function kubectlApply(kubectl: string, kubeconfig: string, body: object): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(kubectl, ['--kubeconfig', kubeconfig, 'apply', '-f', '-'], (err, _out, stderr) =>
      err
        ? reject(new Error(`kubectl apply (cluster DNS) failed: ${stderr || err.message}`, { cause: err }))
        : resolve(),
    );
    child.stdin?.end(JSON.stringify(body));
  });
}

function kubectlOutput(kubectl: string, kubeconfig: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(kubectl, ['--kubeconfig', kubeconfig, ...args], (err, out) =>
      err ? reject(err) : resolve(out),
    ),
  );
}

/**
 * Whether the CoreDNS Deployment's availableReplicas (as kubectl prints it: empty while none) says names resolve: one
 * replica is enough. Not "exactly 1": with two replicas both often become available between two looks.
 */
export function dnsServes(availableReplicas: string): boolean {
  return Number.parseInt(availableReplicas.trim() || '0', 10) >= 1;
}

export async function installClusterDns(
  kubectl: string,
  kubeconfig: string,
  dnsServiceIp: string,
  log: (line: string) => void,
  upstream?: string,
): Promise<void> {
  const t0 = Date.now();
  await kubectlApply(kubectl, kubeconfig, clusterDnsManifests(dnsServiceIp, upstream));
  await waitFor(
    'CoreDNS to be available',
    async () =>
      dnsServes(
        await kubectlOutput(kubectl, kubeconfig, [
          '-n',
          'kube-system',
          'get',
          'deployment',
          'coredns',
          '-o',
          'jsonpath={.status.availableReplicas}',
        ]),
      ),
    { timeoutMs: 90000, intervalMs: 500 },
  );
  log(`real nodes: cluster DNS (CoreDNS) ready on ${dnsServiceIp} in ${Date.now() - t0} ms`);
}
