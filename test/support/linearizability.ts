// Clients that record a history for a linearizability check: several, each doing puts, linearizable gets and
// compare-and-swaps on a few shared keys, every call with its start and end (a call that fails or times out has an
// unknown outcome: it may or may not have taken effect); and the check of that history by lincheck (porcupine
// against etcd's key-value model, localcluster/lincheck/main.go).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Etcd3 } from 'etcd3';
import { clusterClientEndpoint } from '../../crds/names';
import { cacheRoot, toolPaths } from '../../localcluster/tool-cache';
import type { LinearizabilityVerdict } from './soak-checks';
import { seededRandom } from './soak-plan';
import { strictClient, within } from './writer';

/** One call, in the form lincheck reads (see its Call type). Times are microseconds on a monotonic clock. */
export interface LinCall {
  client: number;
  kind: 'put' | 'get' | 'cas';
  key: string;
  value?: string;
  expected?: string;
  call: number;
  /** Absent: the outcome is unknown. */
  return?: number;
  unknown?: boolean;
  found?: boolean;
  got?: string;
  succeeded?: boolean;
}

const CALL_TIMEOUT_MS = 1000;

/** Microseconds since the epoch, from a monotonic clock: two calls of one client never appear to overlap. */
const nowMicros = () => Math.round((performance.timeOrigin + performance.now()) * 1000);

export interface LinClients {
  /** Calls recorded so far. */
  calls(): number;
  /** Holds the clients (no calls) while a step would make every call fail (a paused cluster). */
  hold(on: boolean): void;
  stop(): Promise<LinCall[]>;
}

/**
 * Starts `clients` clients on `keys` keys (`/lin/<n>`), each making a call every `intervalMs` through the cluster's
 * client Service: a put of a value no one else writes, a get, or a compare-and-swap from the value it last saw to a
 * new one. After a failure the client reconnects and waits a little longer each time (up to 2 s), so an outage
 * adds few calls of unknown outcome (each of which porcupine must place anywhere after its start).
 */
export function startLinClients(input: {
  namespace: string;
  name: string;
  seed: number;
  clients?: number;
  keys?: number;
  intervalMs?: number;
}): LinClients {
  const endpoint = clusterClientEndpoint({ namespace: input.namespace, name: input.name });
  const history: LinCall[] = [];
  let stopped = false;
  let held = false;
  const keys = Array.from({ length: input.keys ?? 3 }, (_, i) => `/lin/${i}`);
  const interval = input.intervalMs ?? 200;

  const runClient = async (client: number) => {
    const rnd = seededRandom(input.seed * 31 + client + 1);
    let c: Etcd3 | undefined;
    let seq = 0;
    let backoff = 0;
    const lastSeen = new Map<string, string>();
    while (!stopped) {
      if (held) {
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      const started = Date.now();
      c ??= strictClient([endpoint], {}, CALL_TIMEOUT_MS, 3 * CALL_TIMEOUT_MS);
      const key = keys[Math.floor(rnd() * keys.length)] ?? '/lin/0';
      const draw = rnd();
      const seen = lastSeen.get(key);
      const kind: LinCall['kind'] = draw < 0.4 ? 'get' : draw < 0.7 || seen === undefined ? 'put' : 'cas';
      const value = `c${client}-${seq++}`;
      const call: LinCall = { client, kind, key, call: nowMicros() };
      let ok = true;
      try {
        if (kind === 'get') {
          const got = await within(CALL_TIMEOUT_MS, c.get(key).string());
          call.return = nowMicros();
          call.found = got !== null;
          if (got !== null) {
            call.got = got;
            lastSeen.set(key, got);
          }
        } else if (kind === 'put') {
          call.value = value;
          await within(CALL_TIMEOUT_MS, c.put(key).value(value).exec());
          call.return = nowMicros();
          lastSeen.set(key, value);
        } else {
          call.value = value;
          call.expected = seen;
          const res = await within(
            CALL_TIMEOUT_MS,
            c
              .if(key, 'Value', '==', seen ?? '')
              .then(c.put(key).value(value))
              .commit(),
          );
          call.return = nowMicros();
          call.succeeded = res.succeeded;
          if (res.succeeded) lastSeen.set(key, value);
          else lastSeen.delete(key);
        }
      } catch {
        ok = false;
        call.unknown = true;
        delete call.return;
        c.close();
        c = undefined;
      }
      // A failed get tells nothing (it changed nothing): only writes of unknown outcome are kept.
      if (ok || kind !== 'get') history.push(call);
      backoff = ok ? 0 : Math.min(2000, backoff === 0 ? 250 : backoff * 2);
      const wait = started + interval + backoff - Date.now();
      if (wait > 0 && !stopped) await new Promise((r) => setTimeout(r, wait));
    }
    c?.close();
  };

  const runs = Array.from({ length: input.clients ?? 3 }, (_, i) => runClient(i));
  return {
    calls: () => history.length,
    hold: (on) => {
      held = on;
    },
    async stop() {
      stopped = true;
      await Promise.all(runs);
      return history;
    },
  };
}

/**
 * Checks a history with lincheck (built into the tool cache by `tools`/`up`). `visualize`: where porcupine writes its
 * HTML picture of the longest partial linearization when the history is not linearizable.
 */
export async function checkLinearizable(
  history: readonly LinCall[],
  opts: { timeoutSeconds?: number; visualize?: string; lincheck?: string } = {},
): Promise<LinearizabilityVerdict> {
  const binary = opts.lincheck ?? toolPaths(cacheRoot()).lincheck;
  if (!existsSync(binary))
    throw new Error(
      `${binary} is missing: \`npm run tools\` (or \`up\`) builds lincheck into the tool cache`,
    );
  const args = [`-timeout=${opts.timeoutSeconds ?? 300}s`];
  if (opts.visualize) args.push(`-visualize=${opts.visualize}`);
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(
      binary,
      args,
      { maxBuffer: 1 << 20, timeout: ((opts.timeoutSeconds ?? 300) + 60) * 1000 },
      (err, out) => {
        // Exit 1 (not linearizable) and 3 (undecided) still print a verdict.
        if (out.trim().startsWith('{')) resolve(out);
        else reject(err ?? new Error(`lincheck printed no verdict: ${out}`));
      },
    );
    child.stdin?.end(JSON.stringify(history));
  });
  return JSON.parse(stdout) as LinearizabilityVerdict;
}
