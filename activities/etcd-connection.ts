// Resolves the connection options (TLS credentials, auth) of the cluster an etcd endpoint belongs to, so every etcd call the operator makes uses that cluster's own.
//
// Activities pass only endpoints and names through Temporal; keys, certificates and passwords are read here,
// inside the worker process, and never travel in payloads or history.
import type { IOptions } from 'etcd3';
import { clientServiceName, peerServiceName, PORTS } from '../crds/names';

/** What a cluster's connection adds to an etcd3 client: TLS credentials and/or a user and password. */
export type EtcdConnectionOptions = Pick<IOptions, 'credentials' | 'auth'>;

export interface ClusterKey {
  namespace: string;
  name: string;
}

/** One source of connection options for a cluster (its TLS, its auth); returns {} when it has nothing to add. */
export type ConnectionContributor = (cluster: ClusterKey) => Promise<Partial<EtcdConnectionOptions>>;

/** Resolves the options for a call to these endpoints; they must all belong to one cluster. */
export type ConnectionResolver = (endpoints: readonly string[]) => Promise<EtcdConnectionOptions>;

/**
 * The cluster an endpoint built by crds/names.ts belongs to: a member URL
 * (`<member>.<cluster>-peer.<ns>.svc:2379`) or the client Service URL (`<cluster>-client.<ns>.svc:2379`).
 * Undefined for any other shape (e.g. a test's direct 127.x address).
 */
export function clusterOfEndpoint(url: string): ClusterKey | undefined {
  const host = /^(?:https?:\/\/)?([^/:]+)(?::(\d+))?\/?$/.exec(url.trim());
  if (!host?.[1] || (host[2] !== undefined && Number(host[2]) !== PORTS.client)) return undefined;
  const labels = host[1].split('.');
  if (labels[labels.length - 1] !== 'svc') return undefined;
  if (labels.length === 4) {
    const [, service, namespace] = labels;
    const name = service?.endsWith('-peer') ? service.slice(0, -'-peer'.length) : undefined;
    if (name && namespace && peerServiceName(name) === service) return { namespace, name };
  }
  if (labels.length === 3) {
    const [service, namespace] = labels;
    const name = service?.endsWith('-client') ? service.slice(0, -'-client'.length) : undefined;
    if (name && namespace && clientServiceName(name) === service) return { namespace, name };
  }
  return undefined;
}

/**
 * A resolver that asks each contributor for the endpoints' cluster and merges the answers. Answers are
 * kept for `ttlMs` per cluster (observation calls etcd several times a second during an operation), short
 * enough that a renewed certificate or a changed password is picked up within seconds.
 */
export function createConnectionResolver(
  contributors: readonly ConnectionContributor[],
  options: { ttlMs?: number; now?: () => number } = {},
): ConnectionResolver {
  const ttlMs = options.ttlMs ?? 5000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; value: Promise<EtcdConnectionOptions> }>();

  return async (endpoints) => {
    const clusters = new Map<string, ClusterKey>();
    for (const e of endpoints) {
      const c = clusterOfEndpoint(e);
      if (c) clusters.set(`${c.namespace}/${c.name}`, c);
    }
    if (clusters.size > 1)
      throw new Error(`one etcd call spans endpoints of ${[...clusters.keys()].join(' and ')}`);
    const [entry] = [...clusters];
    if (!entry || contributors.length === 0) return {};
    const [key, cluster] = entry;
    const hit = cache.get(key);
    if (hit && now() - hit.at < ttlMs) return hit.value;
    const value = Promise.all(contributors.map((c) => c(cluster))).then((parts) =>
      Object.assign({}, ...parts),
    );
    cache.set(key, { at: now(), value });
    // A failed read is not cached: the next call tries again.
    value.catch(() => {
      if (cache.get(key)?.value === value) cache.delete(key);
    });
    return value;
  };
}
