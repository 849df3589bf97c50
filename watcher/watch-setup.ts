// What both watchers set up the same way: their common options, informers on this group's custom resources, and the keepWatching hooks.
//
// One place, so that a namespaced install and its excluded namespaces are honoured alike by every informer.
import type { Informer, KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { CustomObjectsApi, makeInformer } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { API_GROUP, API_VERSION_NAME } from '../crds/etcd-cluster';
import { keepWatching } from './keep-watching';

export interface WatcherBaseOptions {
  kubeConfig: KubeConfig;
  temporal: Client;
  taskQueue?: string;
  /** Limit to one namespace; all namespaces when absent. */
  namespace?: string;
  /** With all namespaces: leave these to another installation of the operator. */
  excludeNamespaces?: readonly string[];
  log: (msg: string, fields?: Record<string, unknown>) => void;
  onWatchRestart?: (resource: string) => void;
  /** Every object an informer delivers, for metrics. */
  onObject?: (resource: string, obj: KubernetesObject, deleted: boolean) => void;
}

/** An informer on one of this API group's resources (`plural`), in the watched namespace or in all. */
export function customObjectInformer<T extends KubernetesObject>(
  kc: KubeConfig,
  ns: string | undefined,
  plural: string,
): Informer<T> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  return makeInformer<T>(
    kc,
    ns
      ? `/apis/${API_GROUP}/${API_VERSION_NAME}/namespaces/${ns}/${plural}`
      : `/apis/${API_GROUP}/${API_VERSION_NAME}/${plural}`,
    async () =>
      (ns
        ? custom.listNamespacedCustomObject({
            group: API_GROUP,
            version: API_VERSION_NAME,
            namespace: ns,
            plural,
          })
        : custom.listClusterCustomObject({ group: API_GROUP, version: API_VERSION_NAME, plural })) as never,
  );
}

/** A `watch(resource, informer, onChange)` that keeps each informer running with the options' hooks. */
export function watcherFor(
  opts: WatcherBaseOptions,
  state: { stopped: () => boolean; onSignalFailed: () => void },
) {
  return <T extends KubernetesObject>(
    resource: string,
    informer: Informer<T>,
    onChange: (obj: T, deleted: boolean) => Promise<void>,
  ) =>
    keepWatching(resource, informer, onChange, {
      log: opts.log,
      stopped: state.stopped,
      onSignalFailed: state.onSignalFailed,
      ...(opts.onWatchRestart ? { onWatchRestart: opts.onWatchRestart } : {}),
      ...(opts.onObject ? { onObject: opts.onObject } : {}),
      ...(opts.excludeNamespaces ? { excludeNamespaces: opts.excludeNamespaces } : {}),
    });
}
