// A ListWatch that never stops for good: any error other than 410 restarts it after a back-off (client-node stops informers on errors).
import { ListWatch, Watch } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';

export type InformerEvent = 'add' | 'update' | 'delete';

export interface RestartingInformerOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  fieldSelector?: string;
  onEvent: (event: InformerEvent, obj: T) => void;
  log: (line: string) => void;
}

export interface RestartingInformer<T> {
  /** The cached objects, as of the last list and watch events. */
  list(): readonly T[];
  stop(): Promise<void>;
}

const MIN_RESTART_MS = 1000;
const MAX_RESTART_MS = 30_000;

export function startRestartingInformer<T extends KubernetesObject>(
  opts: RestartingInformerOptions<T>,
): RestartingInformer<T> {
  const informer = new ListWatch<T>(
    opts.path,
    new Watch(opts.kc),
    opts.list,
    false,
    opts.labelSelector,
    opts.fieldSelector,
  );
  let stopped = false;
  let delay = MIN_RESTART_MS;
  let timer: NodeJS.Timeout | undefined;
  // An event proves the watch works again, so the back-off starts over.
  const deliver = (event: InformerEvent, o: T): void => {
    delay = MIN_RESTART_MS;
    opts.onEvent(event, o);
  };
  informer.on('add', (o) => deliver('add', o));
  informer.on('update', (o) => deliver('update', o));
  informer.on('delete', (o) => deliver('delete', o));
  const start = (): void => {
    informer.start().catch((e: unknown) => restart(e));
  };
  const restart = (e: unknown): void => {
    if (stopped) return;
    opts.log(
      `informer ${opts.path} failed (${e instanceof Error ? e.message : String(e)}); restarting in ${delay} ms`,
    );
    clearTimeout(timer);
    timer = setTimeout(start, delay);
    delay = Math.min(delay * 2, MAX_RESTART_MS);
  };
  informer.on('error', restart);
  start();
  return {
    list: () => informer.list(),
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await informer.stop();
    },
  };
}
