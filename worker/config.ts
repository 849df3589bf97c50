// Reads the operator's settings from its environment, with the local stack's defaults; the Helm chart sets exactly these names.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { DEFAULT_ETCD_REPOSITORY } from '../activities/etcd-images';
import { DEFAULT_AGENT_IMAGE } from '../activities/snapshot-manifests';
import { DEFAULT_ALARM_POLL_INTERVAL_SECONDS } from '../watcher/alarm-poller';

export type Role = 'worker' | 'watcher';
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How to reach Temporal over TLS: files mounted from a Secret (mTLS) and/or an API key (Temporal Cloud). */
export interface TemporalTlsConfig {
  clientCertFile?: string;
  clientKeyFile?: string;
  /** CA bundle for the frontend's certificate; absent: the system's CAs. */
  caFile?: string;
  serverName?: string;
}

export interface OperatorConfig {
  roles: Role[];
  logLevel: LogLevel;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue?: string;
  /** Present when the connection uses TLS. */
  temporalTls?: TemporalTlsConfig;
  temporalApiKey?: string;
  kubeconfig?: string;
  watchNamespace?: string;
  /** Namespaces this (all-namespace) operator leaves to another installation, e.g. a namespace-scoped one. */
  excludeNamespaces?: string[];
  etcdRepository: string;
  /** The project's image, run by snapshot Jobs and restore init containers. */
  agentImage: string;
  /** host:port for /metrics, /healthz and /readyz; absent: no HTTP server (the local stack's default). */
  httpAddress?: string;
  /** Holder identity in the watcher Lease: the Pod name in a cluster. */
  identity: string;
  /** Where the watcher Lease lives: the operator's own namespace. */
  operatorNamespace: string;
  /** Seconds between rounds of the etcd alarm poller (watcher/alarm-poller.ts); 0 turns it off. */
  alarmPollSeconds: number;
}

/** What the process knows about where it runs, besides its environment. */
export interface ProcessFacts {
  hostname: string;
  pid: number;
  /** The namespace of the mounted ServiceAccount token, when running in a Pod. */
  serviceAccountNamespace?: string;
}

const SA_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export function processFacts(): ProcessFacts {
  const ns = existsSync(SA_NAMESPACE_FILE) ? readFileSync(SA_NAMESPACE_FILE, 'utf8').trim() : '';
  return { hostname: hostname(), pid: process.pid, ...(ns ? { serviceAccountNamespace: ns } : {}) };
}

export function configFromEnv(
  env: NodeJS.ProcessEnv,
  facts: ProcessFacts = { hostname: 'localhost', pid: 0 },
): OperatorConfig {
  const roles = (env.OPERATOR_ROLES ?? 'worker,watcher')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  for (const r of roles) {
    if (r !== 'worker' && r !== 'watcher')
      throw new Error(`OPERATOR_ROLES: unknown role "${r}" (worker, watcher)`);
  }
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new Error(`LOG_LEVEL: unknown level "${logLevel}" (${LOG_LEVELS.join(', ')})`);
  const certFile = env.TEMPORAL_TLS_CERT_FILE;
  const keyFile = env.TEMPORAL_TLS_KEY_FILE;
  if (Boolean(certFile) !== Boolean(keyFile))
    throw new Error(
      'TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE must be set together (mTLS client certificate)',
    );
  const apiKey = env.TEMPORAL_API_KEY;
  // A client certificate or an API key only makes sense over TLS, so either one turns it on.
  const tlsOn = env.TEMPORAL_TLS === 'true' || Boolean(certFile) || Boolean(apiKey);
  if (env.TEMPORAL_TLS !== undefined && env.TEMPORAL_TLS !== 'true' && env.TEMPORAL_TLS !== 'false')
    throw new Error(`TEMPORAL_TLS: expected true or false, got "${env.TEMPORAL_TLS}"`);
  const excludeNamespaces = (env.EXCLUDE_NAMESPACES ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (excludeNamespaces.length > 0 && env.WATCH_NAMESPACE)
    throw new Error('EXCLUDE_NAMESPACES applies to an operator of all namespaces; WATCH_NAMESPACE is set');
  const alarmPollSeconds = Number(env.ALARM_POLL_INTERVAL_SECONDS ?? DEFAULT_ALARM_POLL_INTERVAL_SECONDS);
  if (!Number.isInteger(alarmPollSeconds) || alarmPollSeconds < 0)
    throw new Error(
      `ALARM_POLL_INTERVAL_SECONDS: expected whole seconds (0 turns the alarm poller off), got "${env.ALARM_POLL_INTERVAL_SECONDS}"`,
    );
  const httpAddress = env.OPERATOR_HTTP_ADDRESS;
  if (httpAddress !== undefined && !/^[^:\s]+:\d+$/.test(httpAddress))
    throw new Error(`OPERATOR_HTTP_ADDRESS: expected host:port, got "${httpAddress}"`);
  return {
    roles: roles as Role[],
    logLevel: logLevel as LogLevel,
    temporalAddress: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    temporalNamespace: env.TEMPORAL_NAMESPACE ?? 'default',
    ...(env.TEMPORAL_TASK_QUEUE ? { taskQueue: env.TEMPORAL_TASK_QUEUE } : {}),
    ...(tlsOn
      ? {
          temporalTls: {
            ...(certFile ? { clientCertFile: certFile } : {}),
            ...(keyFile ? { clientKeyFile: keyFile } : {}),
            ...(env.TEMPORAL_TLS_CA_FILE ? { caFile: env.TEMPORAL_TLS_CA_FILE } : {}),
            ...(env.TEMPORAL_TLS_SERVER_NAME ? { serverName: env.TEMPORAL_TLS_SERVER_NAME } : {}),
          },
        }
      : {}),
    ...(apiKey ? { temporalApiKey: apiKey } : {}),
    ...(env.KUBECONFIG ? { kubeconfig: env.KUBECONFIG.split(':')[0] } : {}),
    ...(env.WATCH_NAMESPACE ? { watchNamespace: env.WATCH_NAMESPACE } : {}),
    ...(excludeNamespaces.length > 0 ? { excludeNamespaces } : {}),
    etcdRepository: env.ETCD_IMAGE_REPOSITORY ?? DEFAULT_ETCD_REPOSITORY,
    agentImage: env.AGENT_IMAGE ?? DEFAULT_AGENT_IMAGE,
    ...(httpAddress ? { httpAddress } : {}),
    // hostname-pid outside a Pod: two operators started by hand on one machine must not share an identity.
    identity: env.OPERATOR_IDENTITY || env.POD_NAME || `${facts.hostname}-${facts.pid}`,
    operatorNamespace: env.OPERATOR_NAMESPACE || facts.serviceAccountNamespace || 'default',
    alarmPollSeconds,
  };
}
