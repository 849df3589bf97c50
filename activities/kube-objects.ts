// Idempotent Kubernetes object effects: "already exists" on create and "not found" on delete are success.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import {
  ApiException,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';

/** The few object operations the activities need; a fake implements this in unit tests. */
export interface KubeObjects {
  /** Creates the object unless one of that name exists; returns which happened. */
  createIfAbsent(obj: KubernetesObject): Promise<'created' | 'exists'>;
  /** Deletes the object if it exists (optionally only if its uid still matches); returns which happened. */
  deleteIfPresent(
    ref: ObjectRef,
    options?: { uid?: string; gracePeriodSeconds?: number },
  ): Promise<'deleted' | 'absent'>;
  read<T extends KubernetesObject>(ref: ObjectRef): Promise<T | undefined>;
  list<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    namespace: string,
    labelSelector: string,
  ): Promise<T[]>;
  /** JSON merge patch; on a `/status` target, patches the status subresource. */
  mergePatch(ref: ObjectRef, patch: object, subresource?: 'status'): Promise<void>;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** The resource's plural; needed only for status patches of custom resources. */
  plural?: string;
}

export function isStatus(err: unknown, code: number): boolean {
  return err instanceof ApiException && err.code === code;
}

export function createKubeObjects(kc: KubeConfig): KubeObjects {
  const api = KubernetesObjectApi.makeApiClient(kc);
  const header = (ref: ObjectRef) => ({
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: ref.name, namespace: ref.namespace },
  });

  return {
    async createIfAbsent(obj) {
      try {
        await api.create(obj);
        return 'created';
      } catch (err) {
        if (isStatus(err, 409)) return 'exists';
        throw err;
      }
    },

    async deleteIfPresent(ref, options = {}) {
      try {
        const body = options.uid ? { preconditions: { uid: options.uid } } : undefined;
        await api.delete(
          header(ref),
          undefined,
          undefined,
          options.gracePeriodSeconds,
          undefined,
          'Background',
          body,
        );
        return 'deleted';
      } catch (err) {
        // 404: already gone; 409 on a uid precondition: a newer object of the same name, not ours to delete.
        if (isStatus(err, 404) || (options.uid && isStatus(err, 409))) return 'absent';
        throw err;
      }
    },

    async read<T extends KubernetesObject>(ref: ObjectRef) {
      try {
        return (await api.read<T>(header(ref) as Parameters<typeof api.read<T>>[0])) as T;
      } catch (err) {
        if (isStatus(err, 404)) return undefined;
        throw err;
      }
    },

    async list<T extends KubernetesObject>(
      apiVersion: string,
      kind: string,
      namespace: string,
      labelSelector: string,
    ) {
      const res = await api.list<T>(
        apiVersion,
        kind,
        namespace,
        undefined,
        undefined,
        undefined,
        undefined,
        labelSelector,
      );
      return res.items;
    },

    async mergePatch(ref, patch, subresource) {
      if (subresource === 'status') {
        // KubernetesObjectApi has no subresource support; the status path is built by hand.
        await patchStatus(kc, ref, patch);
        return;
      }
      await api.patch(
        {
          ...patch,
          ...header(ref),
          // The patch's own metadata (labels, annotations) merged under the identifying name and namespace.
          metadata: { ...((patch as { metadata?: object }).metadata ?? {}), ...header(ref).metadata },
        } as KubernetesObject,
        undefined,
        undefined,
        'etcd-conductor',
        undefined,
        PatchStrategy.MergePatch,
      );
    },
  };
}

async function patchStatus(kc: KubeConfig, ref: ObjectRef, patch: object): Promise<void> {
  const [group, version] = ref.apiVersion.split('/');
  const plural = ref.plural;
  if (!group || !version || !plural) {
    throw new Error(
      `status patches need a group/version apiVersion and a plural, got ${ref.apiVersion} ${ref.kind}`,
    );
  }
  await kc
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObjectStatus(
      { group, version, namespace: ref.namespace, plural, name: ref.name, body: patch },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}
