// Runs an informer for as long as the watcher lives: every change goes to `onChange`, and any watch error leads
// to a relist after a growing back-off (1 s doubling to 30 s), never a silent stop.
import type { Informer, KubernetesObject } from '@kubernetes/client-node';

const MAX_BACKOFF_MS = 30_000;

export interface KeepWatchingHooks {
  log: (msg: string, fields?: Record<string, unknown>) => void;
  stopped: () => boolean;
  /** A signal failed: forget what was sent, so the next change or resync is not filtered out as a duplicate. */
  onSignalFailed: () => void;
  onWatchRestart?: (resource: string) => void;
  /** Metrics hook: every object the informer delivers outside the excluded namespaces. */
  onObject?: (resource: string, obj: KubernetesObject, deleted: boolean) => void;
  /** Namespaces another installation of the operator serves: their objects are ignored. */
  excludeNamespaces?: readonly string[];
}

export function keepWatching<T extends KubernetesObject>(
  resource: string,
  informer: Informer<T>,
  onChange: (obj: T, deleted: boolean) => Promise<void>,
  hooks: KeepWatchingHooks,
): void {
  let backoff = 1000;
  const excluded = new Set(hooks.excludeNamespaces ?? []);
  const handle = (deleted: boolean) => (obj: T) => {
    // Only an event proves the watch works: ListWatch emits `connect` at every attempt, even failing ones.
    backoff = 1000;
    if (excluded.has(obj.metadata?.namespace ?? '')) return;
    hooks.onObject?.(resource, obj, deleted);
    onChange(obj, deleted).catch((err: unknown) => {
      hooks.log('signal failed; the next change or resync retries it', { resource, error: String(err) });
      hooks.onSignalFailed();
    });
  };
  informer.on('add', handle(false));
  informer.on('update', handle(false));
  informer.on('delete', handle(true));
  informer.on('error', (err: unknown) => {
    if (hooks.stopped()) return;
    hooks.onWatchRestart?.(resource);
    hooks.log('watch failed; relisting after back-off', { resource, error: String(err), backoffMs: backoff });
    const delay = backoff;
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    setTimeout(() => {
      if (!hooks.stopped()) informer.start().catch(() => undefined);
    }, delay);
  });
}
