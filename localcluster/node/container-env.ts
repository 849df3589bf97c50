// Builds a container's environment from its spec the way the kubelet does; a missing non-optional source is a config error, never a silent gap.
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { expandVars } from './expand-vars';

/** Decoded Secret and ConfigMap data by name; `undefined` means the object does not exist. */
export interface EnvSources {
  secrets: Map<string, Record<string, string> | undefined>;
  configMaps: Map<string, Record<string, string> | undefined>;
}

export interface PodRuntimeFacts {
  podIp: string;
  hostIp: string;
  /** Node allocatable, used when a resourceFieldRef names a limit the container does not set. */
  nodeCpuCores: number;
  nodeMemoryBytes: number;
}

/** Where in-cluster clients reach the apiserver: the address the node itself dials (its certificate names it). */
export interface ApiServerAddress {
  host: string;
  port: string;
}

export interface BaseEnvInputs {
  /** The image's PATH dirs, put before the system's. */
  imagePath: string[];
  systemPath: string[];
  hostname: string;
  /** The effective runAsUser (container over Pod); absent means the image's user, root on this node. */
  runAsUser: number | undefined;
  apiServer: ApiServerAddress | undefined;
}

/** The effective runAsUser of a container: its own securityContext wins over the Pod's. */
export function effectiveRunAsUser(pod: V1Pod, container: V1Container): number | undefined {
  return container.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser;
}

/**
 * What every container gets before its own env, as the kubelet and the runtime give it: PATH, HOSTNAME, HOME and the
 * `kubernetes` Service variables. HOME is /root for root only; another uid has no passwd entry here, so it gets `/`
 * as containerd gives it. That also keeps a Pod process from finding the host user's ~/.kube/config, which
 * client libraries would prefer over the in-cluster config.
 */
export function baseContainerEnv(inputs: BaseEnvInputs): Record<string, string> {
  const env: Record<string, string> = {
    PATH: [...inputs.imagePath, ...inputs.systemPath].join(':'),
    HOSTNAME: inputs.hostname,
    HOME: inputs.runAsUser === undefined || inputs.runAsUser === 0 ? '/root' : '/',
  };
  const api = inputs.apiServer;
  if (api !== undefined) {
    const host = api.host.includes(':') ? `[${api.host}]` : api.host;
    Object.assign(env, {
      KUBERNETES_SERVICE_HOST: api.host,
      KUBERNETES_SERVICE_PORT: api.port,
      KUBERNETES_SERVICE_PORT_HTTPS: api.port,
      KUBERNETES_PORT: `tcp://${host}:${api.port}`,
      [`KUBERNETES_PORT_${api.port}_TCP`]: `tcp://${host}:${api.port}`,
      [`KUBERNETES_PORT_${api.port}_TCP_PROTO`]: 'tcp',
      [`KUBERNETES_PORT_${api.port}_TCP_PORT`]: api.port,
      [`KUBERNETES_PORT_${api.port}_TCP_ADDR`]: api.host,
    });
  }
  return env;
}

/** Reason CreateContainerConfigError: the container cannot start until its config sources exist. */
export class ContainerConfigError extends Error {}

export function referencedEnvObjects(container: V1Container): {
  secrets: Set<string>;
  configMaps: Set<string>;
} {
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  for (const e of container.env ?? []) {
    if (e.valueFrom?.secretKeyRef?.name) secrets.add(e.valueFrom.secretKeyRef.name);
    if (e.valueFrom?.configMapKeyRef?.name) configMaps.add(e.valueFrom.configMapKeyRef.name);
  }
  for (const f of container.envFrom ?? []) {
    if (f.secretRef?.name) secrets.add(f.secretRef.name);
    if (f.configMapRef?.name) configMaps.add(f.configMapRef.name);
  }
  return { secrets, configMaps };
}

const SUFFIXES: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes resource quantity as a number ("500m" -> 0.5, "1Gi" -> 1073741824); NaN when malformed. */
export function parseQuantity(q: string): number {
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(q.trim());
  const factor = m ? SUFFIXES[m[2] ?? ''] : undefined;
  return m && factor !== undefined ? Number(m[1]) * factor : Number.NaN;
}

/** The value of a downward-API fieldRef; unsupported paths are a config error, as in the apiserver's validation. */
export function podFieldValue(
  pod: V1Pod,
  fieldPath: string,
  facts: Pick<PodRuntimeFacts, 'podIp' | 'hostIp'>,
): string {
  const md = pod.metadata ?? {};
  const keyed = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (keyed) {
    const map = keyed[1] === 'labels' ? md.labels : md.annotations;
    return map?.[keyed[2] ?? ''] ?? '';
  }
  const renderMap = (m: Record<string, string> | undefined): string =>
    Object.keys(m ?? {})
      .sort()
      .map((k) => `${k}="${(m ?? {})[k]}"`)
      .join('\n');
  switch (fieldPath) {
    case 'metadata.name':
      return md.name ?? '';
    case 'metadata.namespace':
      return md.namespace ?? '';
    case 'metadata.uid':
      return md.uid ?? '';
    case 'metadata.labels':
      return renderMap(md.labels);
    case 'metadata.annotations':
      return renderMap(md.annotations);
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.podIP':
    case 'status.podIPs':
      return facts.podIp;
    case 'status.hostIP':
    case 'status.hostIPs':
      return facts.hostIp;
    default:
      throw new ContainerConfigError(`unsupported fieldRef ${fieldPath}`);
  }
}

/** resourceFieldRef: limits fall back to node allocatable, requests to 0; the result is rounded up in divisor units. */
export function resourceFieldValue(
  container: V1Container,
  resource: string,
  divisor: string | undefined,
  facts: PodRuntimeFacts,
): string {
  const [kind, name] = resource.split('.') as [string, string | undefined];
  const declared = (kind === 'limits' ? container.resources?.limits : container.resources?.requests)?.[
    name ?? ''
  ];
  const isCpu = name === 'cpu';
  let value = declared !== undefined ? parseQuantity(String(declared)) : Number.NaN;
  if (Number.isNaN(value))
    value = kind === 'limits' ? (isCpu ? facts.nodeCpuCores : facts.nodeMemoryBytes) : 0;
  const unit = divisor !== undefined ? parseQuantity(String(divisor)) : 1;
  return String(Math.ceil(value / (unit > 0 ? unit : 1)));
}

function lookupKey(
  kind: 'Secret' | 'ConfigMap',
  objects: Map<string, Record<string, string> | undefined>,
  namespace: string,
  name: string,
  key: string,
  optional: boolean,
): string | undefined {
  const data = objects.get(name);
  if (data === undefined) {
    if (optional) return undefined;
    throw new ContainerConfigError(`${kind === 'Secret' ? 'secret' : 'configmap'} "${name}" not found`);
  }
  const value = data[key];
  if (value === undefined && !optional)
    throw new ContainerConfigError(`couldn't find key ${key} in ${kind} ${namespace}/${name}`);
  return value;
}

/**
 * Environment in Kubernetes order: base (PATH, HOSTNAME, service variables), then envFrom sources, then env entries,
 * each env value expanded against what is defined before it.
 */
export function resolveContainerEnv(
  pod: V1Pod,
  container: V1Container,
  sources: EnvSources,
  facts: PodRuntimeFacts,
  base: Record<string, string>,
): Record<string, string> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const env: Record<string, string> = { ...base };
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    const ref = from.secretRef ?? from.configMapRef;
    if (!ref?.name) continue;
    const kind = from.secretRef ? 'Secret' : 'ConfigMap';
    const data = (kind === 'Secret' ? sources.secrets : sources.configMaps).get(ref.name);
    if (data === undefined) {
      if (ref.optional) continue;
      throw new ContainerConfigError(`${kind === 'Secret' ? 'secret' : 'configmap'} "${ref.name}" not found`);
    }
    for (const [k, v] of Object.entries(data)) env[prefix + k] = v;
  }
  for (const e of container.env ?? []) {
    const vf = e.valueFrom;
    let value: string | undefined;
    if (vf === undefined) value = expandVars(e.value ?? '', (n) => env[n]);
    else if (vf.fieldRef) value = podFieldValue(pod, vf.fieldRef.fieldPath, facts);
    else if (vf.resourceFieldRef)
      value = resourceFieldValue(
        container,
        vf.resourceFieldRef.resource,
        vf.resourceFieldRef.divisor as string | undefined,
        facts,
      );
    else if (vf.secretKeyRef)
      value = lookupKey(
        'Secret',
        sources.secrets,
        namespace,
        vf.secretKeyRef.name ?? '',
        vf.secretKeyRef.key,
        vf.secretKeyRef.optional ?? false,
      );
    else if (vf.configMapKeyRef)
      value = lookupKey(
        'ConfigMap',
        sources.configMaps,
        namespace,
        vf.configMapKeyRef.name ?? '',
        vf.configMapKeyRef.key,
        vf.configMapKeyRef.optional ?? false,
      );
    if (value !== undefined) env[e.name] = value;
  }
  return env;
}

/** command/args with $(VAR) expanded against the final environment. */
export function expandCommand(
  parts: string[] | undefined,
  env: Record<string, string>,
): string[] | undefined {
  return parts?.map((p) => expandVars(p, (n) => env[n]));
}
