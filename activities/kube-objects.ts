// Idempotent Kubernetes object effects: "already exists" on create and "not found" on delete are success.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../crds/conditions';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';

/** The few object operations the activities need; a fake implements this in unit tests. */
export interface KubeObjects {
  /**
   * Creates the object unless one of that name exists; returns which happened. An object built with a controller
   * owner reference finds an existing one only if that one has the same owner: one with no such owner is refused
   * (never adopted), and one a former owner of the same name holds waits for the garbage collector (retried).
   */
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
  /**
   * The last lines of a container's previous run's log (pods/log, previous=true); undefined when there is none or
   * it may not be read (an older chart's RBAC). Optional: fakes that do not test it leave it out.
   */
  previousLog?(namespace: string, pod: string, container: string): Promise<string | undefined>;
}

/** How much of a previous run's log is read: etcd's last words and the Go stack trace of a panic that follows them. */
export const PREVIOUS_LOG_TAIL_LINES = 200;
const PREVIOUS_LOG_LIMIT_BYTES = 256 * 1024;

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

  async function read<T extends KubernetesObject>(ref: ObjectRef) {
    try {
      return (await api.read<T>(header(ref) as Parameters<typeof api.read<T>>[0])) as T;
    } catch (err) {
      if (isStatus(err, 404)) return undefined;
      throw err;
    }
  }

  return {
    async createIfAbsent(obj) {
      try {
        await api.create(obj);
        return 'created';
      } catch (err) {
        if (!isStatus(err, 409)) throw err;
      }
      const owner = obj.metadata?.ownerReferences?.find((r) => r.controller);
      if (!owner) return 'exists';
      let existing: KubernetesObject | undefined;
      try {
        existing = await read({
          apiVersion: obj.apiVersion ?? '',
          kind: obj.kind ?? '',
          namespace: obj.metadata?.namespace ?? '',
          name: obj.metadata?.name ?? '',
        });
      } catch (err) {
        // An older chart's RBAC may not allow reading it: then it cannot be judged, and counts as found, as before.
        if (isStatus(err, 403)) return 'exists';
        throw err;
      }
      // Deleted between the create and the read: the next attempt creates it.
      if (!existing) throw new Error(`${describe(obj)} was deleted while being created; trying again`);
      refuseForeign(obj, existing, owner);
      return 'exists';
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

    read,

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

    async previousLog(namespace, pod, container) {
      try {
        return await kc.makeApiClient(CoreV1Api).readNamespacedPodLog({
          namespace,
          name: pod,
          container,
          previous: true,
          tailLines: PREVIOUS_LOG_TAIL_LINES,
          limitBytes: PREVIOUS_LOG_LIMIT_BYTES,
        });
      } catch (err) {
        // No previous run (400), Pod gone (404), or not allowed (403): the termination message is all there is.
        if (isStatus(err, 400) || isStatus(err, 403) || isStatus(err, 404)) return undefined;
        throw err;
      }
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

const describe = (o: KubernetesObject) =>
  `${o.kind ?? 'object'} ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

type OwnerRef = NonNullable<NonNullable<KubernetesObject['metadata']>['ownerReferences']>[number];

/**
 * Judges an object found where `wanted` was to be created: the same owner's is ours (a retry found it); a former
 * owner of the same kind and name (deleted, created again) still holds it until the garbage collector removes it,
 * so the caller tries again later; anything else is not ours to take over.
 */
export function refuseForeign(wanted: KubernetesObject, existing: KubernetesObject, owner: OwnerRef): void {
  const owners = existing.metadata?.ownerReferences ?? [];
  if (owners.some((r) => r.uid === owner.uid)) return;
  const former = owners.find((r) => r.kind === owner.kind && r.name === owner.name);
  if (former) {
    throw new Error(
      `${describe(wanted)} still belongs to a former ${owner.kind} ${owner.name} (uid ${former.uid}); waiting for the garbage collector to delete it`,
    );
  }
  const held =
    owners.length > 0
      ? `it belongs to ${owners.map((r) => `${r.kind} ${r.name}`).join(', ')}`
      : 'it has no owner';
  throw ApplicationFailure.nonRetryable(
    `${describe(wanted)} exists and is not ${owner.kind} ${owner.name}'s (${held}): the operator does not adopt it; delete or rename it, then set the retry annotation`,
    FailureTypes.ObjectNotOwned,
  );
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
