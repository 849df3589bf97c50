// The Downgrade operation's etcd side effects: read etcd's cluster/storage versions and downgrade state, and validate+enable etcd's downgrade.
//
// Idempotent: enabling a downgrade that is already enabled (a retry after a crash) is success, and so is
// one whose cluster version already reached the target. Reading uses etcd's Validate, which changes nothing
// (etcd.io/docs/v3.6/downgrades/downgrade_3_6, step 3); Cancel is never used to probe.
import { ApplicationFailure } from '@temporalio/common';
import http from 'node:http';
import https from 'node:https';
import { FailureTypes } from '../crds/conditions';
import { memberClientURL } from '../crds/names';
import type { EtcdAdminOptions } from './etcd-admin';
import { withEtcdClient } from './etcd-admin';
import type { EtcdConnectionOptions } from './etcd-connection';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { DowngradeObservation } from '../contracts/downgrade';

/** What one member's `/version` says: its binary, the cluster version, and (3.6 and later) its storage version. */
export interface MemberVersions {
  server?: string;
  cluster?: string;
  storage?: string;
}

export type DowngradeAction = 'Validate' | 'Enable' | 'Cancel';

/** The two etcd calls a downgrade needs. */
export interface DowngradeEtcd {
  /** Maintenance.Downgrade through any of `endpoints`; rejects with etcd's error. */
  downgrade(endpoints: string[], action: DowngradeAction, version: string): Promise<void>;
  /** GET `<clientURL>/version`. */
  versions(clientURL: string): Promise<MemberVersions>;
}

/** How etcd answered a downgrade request that it refused. */
export type DowngradeRefusal = 'in-progress' | 'invalid-target' | 'other';

/**
 * etcd's refusals by their message (etcdserver/api/v3rpc/rpctypes): "cluster has a downgrade job in progress"
 * (ErrGRPCDowngradeInProcess) and "invalid downgrade target version" (ErrGRPCInvalidDowngradeTargetVersion).
 */
export function classifyDowngradeError(message: string): DowngradeRefusal {
  if (/downgrade job in progress/i.test(message)) return 'in-progress';
  if (/invalid downgrade target version/i.test(message)) return 'invalid-target';
  return 'other';
}

/** `3.5.0` -> `3.4.0`: the target etcd accepts once its cluster version is `3.5`. */
export function previousMinor(version: string): string | undefined {
  const m = /^(\d+)\.(\d+)\.\d+$/.exec(version);
  if (!m || Number(m[2]) === 0) return undefined;
  return `${m[1]}.${Number(m[2]) - 1}.0`;
}

const minorOf = (v: string | undefined) => {
  const m = /^(\d+)\.(\d+)\./.exec(v ?? '');
  return m ? Number(m[1]) * 1000 + Number(m[2]) : undefined;
};

/** The highest of the cluster versions members report (they agree, except for a moment while etcd moves it). */
export function highestClusterVersion(reports: readonly MemberVersions[]): string | undefined {
  let best: string | undefined;
  for (const r of reports) {
    const m = minorOf(r.cluster);
    if (m !== undefined && (best === undefined || m > (minorOf(best) ?? -1))) best = r.cluster;
  }
  return best;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function createDowngradeEtcd(options: EtcdAdminOptions = {}): DowngradeEtcd {
  const timeout = options.callTimeoutMs ?? 5000;
  return {
    async downgrade(endpoints, action, version) {
      // The shared client: the cluster's TLS credentials and auth token, no client-side retries.
      await withEtcdClient(options, endpoints, (client) => client.maintenance.downgrade({ action, version }));
    },
    async versions(clientURL) {
      // /version needs no auth; with client TLS it is served over https and asks for a client certificate.
      const connection = options.connectionFor ? await options.connectionFor([clientURL]) : {};
      const body = (await getJson(clientURL, '/version', connection.credentials, timeout)) as {
        etcdserver?: string;
        etcdcluster?: string;
        storage?: string;
      };
      return {
        ...(body.etcdserver ? { server: body.etcdserver } : {}),
        ...(body.etcdcluster ? { cluster: body.etcdcluster } : {}),
        ...(body.storage ? { storage: body.storage } : {}),
      };
    },
  };
}

/** GET a JSON document from a member's client port, over https with the client certificate when there is one. */
async function getJson(
  clientURL: string,
  path: string,
  credentials: EtcdConnectionOptions['credentials'],
  timeoutMs: number,
): Promise<unknown> {
  const url = new URL(path, credentials ? clientURL.replace(/^http:/, 'https:') : clientURL);
  const text = await new Promise<string>((resolve, reject) => {
    const options = {
      signal: AbortSignal.timeout(timeoutMs),
      ...(credentials
        ? { ca: credentials.rootCertificate, cert: credentials.certChain, key: credentials.privateKey }
        : {}),
    };
    const req = (url.protocol === 'https:' ? https : http).get(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`${url.origin}${path} answered ${res.statusCode}`));
        else resolve(body);
      });
    });
    req.on('error', reject);
  });
  return JSON.parse(text) as unknown;
}

export function createDowngradeActivities(deps: { etcd: DowngradeEtcd }) {
  const { etcd } = deps;
  const endpointsOf = (ref: ClusterRef, members: readonly string[]) =>
    members.map((m) => memberClientURL(ref, m));

  /** Whether a downgrade is enabled, asked with Validate (read-only): undefined when etcd's answer says neither. */
  async function enabled(endpoints: string[], targetVersion: string): Promise<boolean | undefined> {
    for (const version of [targetVersion, previousMinor(targetVersion)]) {
      if (version === undefined) return undefined;
      try {
        await etcd.downgrade(endpoints, 'Validate', version);
        return false;
      } catch (err) {
        const refusal = classifyDowngradeError(messageOf(err));
        if (refusal === 'in-progress') return true;
        // The target is not one minor below the cluster version: ask with the minor below it (etcd's cluster
        // version has already reached the target, or passed it).
        if (refusal === 'invalid-target') continue;
        throw err;
      }
    }
    return undefined;
  }

  async function readVersions(ref: ClusterRef, members: readonly string[]) {
    const reports = await Promise.all(
      members.map(async (name) => {
        try {
          return { name, ...(await etcd.versions(memberClientURL(ref, name))) };
        } catch {
          return { name };
        }
      }),
    );
    return reports;
  }

  return {
    /** etcd's cluster version, each member's storage version and whether a downgrade is enabled; changes nothing. */
    async observeDowngrade(input: {
      ref: ClusterRef;
      members: string[];
      targetVersion: string;
    }): Promise<DowngradeObservation> {
      const reports = await readVersions(input.ref, input.members);
      const clusterVersion = highestClusterVersion(reports);
      const storageVersions: Record<string, string> = {};
      for (const r of reports) if (r.storage) storageVersions[r.name] = r.storage;
      let isEnabled: boolean | undefined;
      try {
        isEnabled = await enabled(endpointsOf(input.ref, input.members), input.targetVersion);
      } catch {
        isEnabled = undefined;
      }
      return {
        ...(clusterVersion ? { clusterVersion } : {}),
        storageVersions,
        ...(isEnabled !== undefined ? { enabled: isEnabled } : {}),
      };
    },

    /**
     * Validate, then Enable etcd's downgrade to `targetVersion` (`3.5.0`). A downgrade already in progress, or a
     * cluster version already at the target, is success (a retry finds its own work). etcd's refusal of the
     * target is permanent (DowngradeRefused): no member has been touched.
     */
    async enableDowngrade(input: {
      ref: ClusterRef;
      members: string[];
      targetVersion: string;
    }): Promise<'enabled' | 'already-enabled' | 'already-at-target'> {
      const endpoints = endpointsOf(input.ref, input.members);
      const refusal = async (err: unknown): Promise<'already-enabled' | 'already-at-target'> => {
        const message = messageOf(err);
        const kind = classifyDowngradeError(message);
        if (kind === 'in-progress') return 'already-enabled';
        if (kind === 'invalid-target') {
          const cluster = highestClusterVersion(await readVersions(input.ref, input.members));
          const at = minorOf(cluster);
          if (at !== undefined && at <= (minorOf(input.targetVersion) ?? -1)) return 'already-at-target';
          throw ApplicationFailure.nonRetryable(
            `etcd refused the downgrade to ${input.targetVersion} (cluster version ${cluster ?? 'unknown'}): ${message}`,
            FailureTypes.DowngradeRefused,
          );
        }
        throw err;
      };
      try {
        await etcd.downgrade(endpoints, 'Validate', input.targetVersion);
      } catch (err) {
        return refusal(err);
      }
      try {
        await etcd.downgrade(endpoints, 'Enable', input.targetVersion);
        return 'enabled';
      } catch (err) {
        return refusal(err);
      }
    },
  };
}

export type DowngradeActivities = ReturnType<typeof createDowngradeActivities>;
