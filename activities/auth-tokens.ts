// Authenticates once per cluster and credentials and attaches the token to short-lived etcd3 clients.
//
// Why not etcd3's own `auth` option: it authenticates against the client's own hosts on every new client,
// and (1) a learner refuses Authenticate ("rpc not supported for learner"), so a learner's status could never
// be read with auth on, and (2) each Authenticate is a bcrypt check and a raft entry, several per second
// while an operation observes. A simple token is assigned on every member when its raft entry applies, so a
// token issued by a voter (or the voters-only client Service) is good at any member, learners included.
// The token lives in this process's memory only, like the password it came from.
import type { Etcd3 } from 'etcd3';

/** How long a token is reused; etcd's simple tokens live 300 s after their last use by default. */
export const TOKEN_REUSE_MS = 60_000;

interface Entry {
  token: string;
  at: number;
}

export interface TokenCache {
  get(key: string): string | undefined;
  set(key: string, token: string): void;
  drop(key: string): void;
}

export function createTokenCache(options: { ttlMs?: number; now?: () => number } = {}): TokenCache {
  const ttl = options.ttlMs ?? TOKEN_REUSE_MS;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  return {
    get(key) {
      const e = entries.get(key);
      if (!e) return undefined;
      if (now() - e.at >= ttl) {
        entries.delete(key);
        return undefined;
      }
      return e.token;
    },
    set(key, token) {
      entries.set(key, { token, at: now() });
    },
    drop(key) {
      entries.delete(key);
    },
  };
}

/** The process's one cache: every etcd call of the worker shares it. */
export const processTokens = createTokenCache();

interface MetadataLike {
  set(key: string, value: string): void;
}
interface AuthenticatorLike {
  getMetadata(): Promise<MetadataLike>;
  invalidateMetadata(): void;
}

/** Where a client's calls take their token from, and whom to tell when etcd rejects it. */
export interface TokenSource {
  /** The token to send (undefined: none, auth is off). */
  token(): Promise<string | undefined>;
  /** etcd answered "invalid auth token"; etcd3 then makes the same call again, asking `token()` anew. */
  rejected(): void;
}

/**
 * Makes every call of `client` (built without the `auth` option) carry the token `source` gives. etcd3 has no
 * public way to pass a token, so this wraps its authenticator.
 */
export function attachTokenSource(client: Etcd3, source: TokenSource): void {
  const authenticator = (client as unknown as { pool?: { authenticator?: AuthenticatorLike } }).pool
    ?.authenticator;
  if (!authenticator || typeof authenticator.getMetadata !== 'function') {
    throw new Error('the etcd3 client has no authenticator to attach a token to (was etcd3 upgraded?)');
  }
  const empty = authenticator.getMetadata.bind(authenticator);
  authenticator.invalidateMetadata = () => source.rejected();
  authenticator.getMetadata = async () => {
    const token = await source.token();
    const metadata = await empty();
    if (token !== undefined) metadata.set('token', token);
    return metadata;
  };
}

/**
 * Makes every call of `client` (built without the `auth` option) carry `token`; after etcd rejects the token, the
 * next call fails with "invalid auth token" instead of etcd3 retrying the same token forever.
 */
export function attachToken(client: Etcd3, token: string): void {
  let rejected = false;
  attachTokenSource(client, {
    token: () =>
      rejected ? Promise.reject(new Error('etcdserver: invalid auth token')) : Promise.resolve(token),
    rejected: () => {
      rejected = true;
    },
  });
}
