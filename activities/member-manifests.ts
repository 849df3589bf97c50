// Builds the Kubernetes objects of a cluster and its members as plain data; every name derives from the member name.
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { API_VERSION, ETCD_CLUSTER, OPERATOR_OWNED_FLAGS } from '../crds/etcd-cluster';
import { Annotations, Labels } from '../crds/labels';
import type { RestoreInit } from './restore-manifests';
import {
  claimName,
  clientServiceName,
  memberClientURL,
  memberHost,
  memberPeerURL,
  peerServiceName,
  PORTS,
} from '../crds/names';
import { clientTLSOn, clientURLFor, peerTLSOn, peerURLFor, TLS_CA_HASH_ANNOTATION } from '../crds/tls-names';
import { tlsEtcdFlags, tlsVolumeMounts, tlsVolumes } from './tls-pod';
import { podUserMetadata, withAdditionalMetadata } from './additional-metadata';
import type { ClusterRef } from '../contracts/cluster-ref';

export const DATA_DIR = '/var/lib/etcd';
/** etcd's --data-dir: a subdirectory of the volume, so a restore can work beside it (docs/agent.md). */
export const ETCD_DATA_DIR = `${DATA_DIR}/data`;
const MANAGED_BY = 'etcd-conductor';

/** The EtcdCluster as the controlling owner of an object the operator makes for it (deleted with it). */
export function ownerReference(ref: ClusterRef) {
  return {
    apiVersion: API_VERSION,
    kind: ETCD_CLUSTER.kind,
    name: ref.name,
    uid: ref.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

function commonLabels(cluster: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'etcd',
    'app.kubernetes.io/instance': cluster,
    'app.kubernetes.io/managed-by': MANAGED_BY,
    [Labels.cluster]: cluster,
  };
}

export type MemberRole = 'voter' | 'learner';

export interface MemberPodInput {
  ref: ClusterRef;
  spec: EtcdClusterSpec;
  member: string;
  role: MemberRole;
  image: string;
  /** `new` for the seed member (or an initial member) of a fresh cluster; `existing` for every member that joins one. */
  initialClusterState: 'new' | 'existing';
  /** The initial members of a brand-new cluster that start together, this one included: put on the Pod as an annotation. */
  initialMembers?: string[];
  /** name=peerURL pairs of every member etcd lists, this one included. */
  initialCluster: string;
  /** The seed of a cluster restored from a snapshot: its `restore` init container, run before etcd starts. */
  restore?: RestoreInit;
  /** With spec.tls: a hash of the CA bundles the member trusts (activities/etcd-tls.ts), put on the Pod as an annotation. */
  tlsCAHash?: string;
  /**
   * Only for an approved recovery from a permanent quorum loss (workflows/operations/recover.ts): etcd starts with
   * --force-new-cluster, keeping its data and dropping every other member. The Pod says so in an annotation, and is
   * replaced by a plain one as soon as it answered: a restart with the flag would drop members added later.
   */
  forceNewCluster?: boolean;
}

/** On a member Pod started with --force-new-cluster: the recovery replaces it with a plain Pod once it answered. */
export const FORCE_NEW_CLUSTER_ANNOTATION = 'etcd.conductor.dev/force-new-cluster';

/** The uid keeps two clusters that reuse a name from ever joining each other's members. */
export function clusterToken(ref: ClusterRef): string {
  return `${ref.namespace}/${ref.name}/${ref.uid}`;
}

/** Flags in etcd's `--flag=value` form; the operator's own flags come last so nothing overrides them. */
export function etcdArgs(input: MemberPodInput): string[] {
  const { ref, member } = input;
  const peerScheme = peerTLSOn(input.spec) ? 'https' : 'http';
  const clientScheme = clientTLSOn(input.spec) ? 'https' : 'http';
  const own: Record<string, string> = {
    name: member,
    'data-dir': ETCD_DATA_DIR,
    'listen-peer-urls': `${peerScheme}://$(POD_IP):${PORTS.peer}`,
    'listen-client-urls': `${clientScheme}://$(POD_IP):${PORTS.client}`,
    'listen-metrics-urls': `http://$(POD_IP):${PORTS.metrics}`,
    'advertise-client-urls': input.spec.tls
      ? clientURLFor(input.spec, ref, member)
      : memberClientURL(ref, member),
    'initial-advertise-peer-urls': input.spec.tls
      ? peerURLFor(input.spec, ref, member)
      : memberPeerURL(ref, member),
    'initial-cluster': input.initialCluster,
    'initial-cluster-state': input.initialClusterState,
    'initial-cluster-token': clusterToken(ref),
    ...tlsEtcdFlags(input.spec),
  };
  // The CRD's CEL rule refuses every owned flag; an object stored before a rule existed must still not
  // reach etcd with one (a stray --force-new-cluster or --discovery would fork or hijack the cluster).
  const refused = new Set<string>([...OPERATOR_OWNED_FLAGS, ...Object.keys(own)]);
  const extra = Object.entries(input.spec.options ?? {})
    .filter(([k]) => !refused.has(k))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `--${k}=${v}`);
  const forced = input.forceNewCluster ? ['--force-new-cluster=true'] : [];
  return [...extra, ...Object.entries(own).map(([k, v]) => `--${k}=${v}`), ...forced];
}

export function memberLabels(
  input: Pick<MemberPodInput, 'ref' | 'spec' | 'member' | 'role'>,
): Record<string, string> {
  return {
    ...podUserMetadata(input.spec).labels,
    ...commonLabels(input.ref.name),
    [Labels.member]: input.member,
    [Labels.role]: input.role,
  };
}

/** Spread members over nodes unless the user said otherwise. */
function defaultAffinity(cluster: string) {
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: { matchLabels: { [Labels.cluster]: cluster } },
          },
        },
      ],
    },
  };
}

export function memberPod(input: MemberPodInput) {
  const { ref, spec, member } = input;
  const memory = spec.storage.medium === 'Memory';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: member,
      namespace: ref.namespace,
      labels: memberLabels(input),
      annotations: {
        ...podUserMetadata(spec).annotations,
        ...(input.tlsCAHash ? { [TLS_CA_HASH_ANNOTATION]: input.tlsCAHash } : {}),
        ...(input.forceNewCluster ? { [FORCE_NEW_CLUSTER_ANNOTATION]: 'true' } : {}),
        ...initialMembersAnnotation(input.initialMembers),
      } as Record<string, string>,
      ownerReferences: [ownerReference(ref)],
    },
    spec: {
      hostname: member,
      subdomain: peerServiceName(ref.name),
      // The member's own name, answered from the Pod's /etc/hosts. A joining etcd compares its --initial-cluster with
      // the member list and resolves its own name for every pair that differs (ValidateClusterAndAssignIDs), and the
      // cluster DNS may still answer "no such name" from its negative cache: the leader looked the name up right
      // after MemberAdd, before this Pod had an address. etcd then retries each second until that answer expires
      // (up to 5 s on this stack's CoreDNS, 30 s with kubeadm's defaults, and at 30 s etcd gives up and exits).
      // Nothing in the Pod dials its own name, so any address will do; other Pods resolve it through DNS as before.
      hostAliases: [{ ip: '127.0.0.1', hostnames: [memberHost(ref, member)] }],
      restartPolicy: 'Always',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 30,
      ...(spec.priorityClassName ? { priorityClassName: spec.priorityClassName } : {}),
      ...(spec.imagePullSecrets?.length ? { imagePullSecrets: spec.imagePullSecrets } : {}),
      ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
      ...(spec.tolerations ? { tolerations: spec.tolerations } : {}),
      ...(spec.topologySpreadConstraints
        ? { topologySpreadConstraints: spec.topologySpreadConstraints }
        : {}),
      affinity: spec.affinity ?? defaultAffinity(ref.name),
      ...(input.restore ? { initContainers: [input.restore.container] } : {}),
      // The restricted Pod Security Standard: non-root, no privilege escalation, no capabilities, RuntimeDefault.
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        fsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: 'etcd',
          image: input.image,
          command: ['etcd'],
          args: etcdArgs(input),
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          ],
          ports: [
            { name: 'client', containerPort: PORTS.client },
            { name: 'peer', containerPort: PORTS.peer },
            { name: 'metrics', containerPort: PORTS.metrics },
          ],
          ...(spec.resources ? { resources: spec.resources } : {}),
          volumeMounts: [{ name: 'data', mountPath: DATA_DIR }, ...tlsVolumeMounts(spec)],
          // The tail of a failed etcd's log becomes its termination message: the observer reads from it
          // that a member restarted on a wiped claim (see member-failures.ts).
          terminationMessagePolicy: 'FallbackToLogsOnError',
          // /livez needs no quorum, so a minority partition does not restart healthy members.
          livenessProbe: {
            httpGet: { path: '/livez', port: PORTS.metrics },
            periodSeconds: 10,
            timeoutSeconds: 5,
            failureThreshold: 6,
          },
          startupProbe: {
            httpGet: { path: '/livez', port: PORTS.metrics },
            periodSeconds: 1,
            timeoutSeconds: 5,
            failureThreshold: 300,
          },
          // /readyz fails for learners: a learner is never Ready, so promotion must not wait for readiness
          // (the planner asks etcd instead), and the voters-only client Service never routes to it.
          readinessProbe: {
            httpGet: { path: '/readyz', port: PORTS.metrics },
            periodSeconds: 1,
            timeoutSeconds: 5,
            failureThreshold: 3,
          },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
            capabilities: { drop: ['ALL'] },
          },
        },
      ],
      volumes: [
        memory
          ? { name: 'data', emptyDir: { medium: 'Memory', sizeLimit: String(spec.storage.size) } }
          : { name: 'data', persistentVolumeClaim: { claimName: claimName(member) } },
        ...(input.restore?.volumes ?? []),
        ...tlsVolumes(spec, ref.name),
      ],
    },
  };
}

/** The record of a brand-new cluster's initial members on their claims and Pods (Annotations.initialMembers). */
function initialMembersAnnotation(members: string[] | undefined): Record<string, string> {
  return members ? { [Annotations.initialMembers]: members.join(',') } : {};
}

/** The names an initial-members annotation holds; undefined for none or an empty one. */
export function initialMembersOfAnnotation(value: string | undefined): string[] | undefined {
  const names = (value ?? '').split(',').filter((n) => n !== '');
  return names.length > 0 ? names : undefined;
}

export function memberClaim(input: Pick<MemberPodInput, 'ref' | 'spec' | 'member' | 'initialMembers'>) {
  const { ref, spec, member } = input;
  return withAdditionalMetadata(claimManifest(ref, spec, member, input.initialMembers), spec);
}

function claimManifest(ref: ClusterRef, spec: EtcdClusterSpec, member: string, initialMembers?: string[]) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(member),
      namespace: ref.namespace,
      labels: { ...commonLabels(ref.name), [Labels.member]: member },
      ...(initialMembers ? { annotations: initialMembersAnnotation(initialMembers) } : {}),
      ownerReferences: [ownerReference(ref)],
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: String(spec.storage.size) } },
      ...(spec.storage.storageClassName ? { storageClassName: spec.storage.storageClassName } : {}),
    },
  };
}

/** Headless Service that gives each member its stable DNS name, learners and unready members included. */
export function peerService(ref: ClusterRef, spec?: Pick<EtcdClusterSpec, 'additionalMetadata'>) {
  return withAdditionalMetadata(peerServiceManifest(ref), spec);
}

function peerServiceManifest(ref: ClusterRef) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: peerServiceName(ref.name),
      namespace: ref.namespace,
      labels: commonLabels(ref.name),
      ownerReferences: [ownerReference(ref)],
    },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { [Labels.cluster]: ref.name },
      ports: [
        { name: 'client', port: PORTS.client, targetPort: PORTS.client },
        { name: 'peer', port: PORTS.peer, targetPort: PORTS.peer },
      ],
    },
  };
}

/** ClusterIP Service for clients: voters only, and of those only the Ready ones. */
export function clientService(ref: ClusterRef, spec?: Pick<EtcdClusterSpec, 'additionalMetadata'>) {
  return withAdditionalMetadata(clientServiceManifest(ref), spec);
}

function clientServiceManifest(ref: ClusterRef) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: clientServiceName(ref.name),
      namespace: ref.namespace,
      labels: commonLabels(ref.name),
      ownerReferences: [ownerReference(ref)],
    },
    spec: {
      type: 'ClusterIP',
      selector: { [Labels.cluster]: ref.name, [Labels.role]: 'voter' },
      ports: [{ name: 'client', port: PORTS.client, targetPort: PORTS.client }],
    },
  };
}

/** Voluntary disruptions may never take more voters than quorum allows. */
export function disruptionBudget(
  ref: ClusterRef,
  voters: number,
  spec?: Pick<EtcdClusterSpec, 'additionalMetadata'>,
) {
  return withAdditionalMetadata(disruptionBudgetManifest(ref, voters), spec);
}

function disruptionBudgetManifest(ref: ClusterRef, voters: number) {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name: ref.name,
      namespace: ref.namespace,
      labels: commonLabels(ref.name),
      ownerReferences: [ownerReference(ref)],
    },
    spec: {
      minAvailable: Math.floor(Math.max(voters, 1) / 2) + 1,
      selector: { matchLabels: { [Labels.cluster]: ref.name, [Labels.role]: 'voter' } },
    },
  };
}

/** etcd's --initial-cluster value from member names and peer URLs, in a stable order. */
export function initialCluster(members: { name: string; peerURL: string }[]): string {
  return [...members]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((m) => `${m.name}=${m.peerURL}`)
    .join(',');
}
