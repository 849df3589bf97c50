// Records Kubernetes Events on an EtcdCluster so `kubectl describe` shows what the operator did and why.
//
// Invariant: one Event per (object, reason, message, workflow), under a name derived from them, its count raised
// on each repeat as Kubernetes counts them; a retry of the same activity finds its own Event and changes nothing.
import { createHash } from 'node:crypto';
import type { CoreV1Event, KubeConfig } from '@kubernetes/client-node';
import { ApiException, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Context } from '@temporalio/activity';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { EventReason } from '../contracts/event-reasons';

export interface EventInput {
  ref: ClusterRef;
  type: 'Normal' | 'Warning';
  reason: EventReason;
  message: string;
}

export interface EventRecorder {
  record(event: EventInput): Promise<void>;
}

/**
 * Records one Event, dropping it when the apiserver refuses it (4xx): the audit trail must never block an
 * operation, a snapshot or a schedule. Anything else (the apiserver unreachable) is thrown, so Temporal retries.
 */
export async function recordOrDrop(record: () => Promise<void>): Promise<'recorded' | 'dropped'> {
  try {
    await record();
    return 'recorded';
  } catch (err) {
    if (err instanceof ApiException && err.code >= 400 && err.code < 500) return 'dropped';
    throw err;
  }
}

/** The annotation naming the activity execution that last counted an Event: its retries count nothing more. */
export const EVENT_RECORDED_BY = 'etcd.conductor.dev/recorded-by';

/** What an Event is about; the involved object's uid keeps a same-name successor's Events apart. */
export interface CountedEvent {
  involvedObject: { apiVersion: string; kind: string; namespace: string; name: string; uid: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  component: string;
}

/** The Event API this needs; the apiserver's in production, a map in unit tests. */
export interface EventApi {
  create(namespace: string, body: CoreV1Event): Promise<'created' | 'exists'>;
  read(namespace: string, name: string): Promise<CoreV1Event | undefined>;
  mergePatch(namespace: string, name: string, patch: object): Promise<void>;
}

/**
 * `<object>.<16 hex>` from the object's uid, the reason, the message and the workflow that tells it: the same
 * notice from the same workflow always lands on the same Event.
 */
export function eventName(event: CountedEvent, workflowId: string | undefined): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([event.involvedObject.uid, event.reason, event.message, workflowId ?? '']))
    .digest('hex')
    .slice(0, 16);
  return `${event.involvedObject.name}.${digest}`;
}

/** The workflow and activity execution calling, when called from an activity (retries share it). */
export function callingActivity(): { workflowId: string; execution: string } | undefined {
  try {
    const info = Context.current().info;
    const run = info.workflowExecution;
    return run ? { workflowId: run.workflowId, execution: `${run.runId}/${info.activityId}` } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Creates the Event, or raises the count of the one already there. `by` names the calling activity
 * execution: when it already counted this Event (a retry after a write that timed out), nothing changes.
 */
export async function recordCounted(
  api: EventApi,
  event: CountedEvent,
  caller: { workflowId: string; execution: string } | undefined,
  now: Date,
): Promise<'created' | 'counted' | 'unchanged'> {
  const { namespace } = event.involvedObject;
  const name = eventName(event, caller?.workflowId);
  const annotations = caller ? { [EVENT_RECORDED_BY]: caller.execution } : undefined;
  const created = await api.create(namespace, {
    metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
    involvedObject: event.involvedObject,
    type: event.type,
    reason: event.reason,
    message: event.message,
    source: { component: event.component },
    // The legacy (first/lastTimestamp) form: eventTime is a MicroTime the client serialises with
    // milliseconds only, which the apiserver refuses.
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  });
  if (created === 'created') return 'created';
  const existing = await api.read(namespace, name);
  if (!existing) return recordCounted(api, event, caller, now);
  if (caller && existing.metadata?.annotations?.[EVENT_RECORDED_BY] === caller.execution) return 'unchanged';
  await api.mergePatch(namespace, name, {
    metadata: {
      // A conflicting count raised meanwhile fails the patch; the activity's retry counts again from it.
      resourceVersion: existing.metadata?.resourceVersion,
      ...(annotations ? { annotations } : {}),
    },
    count: (existing.count ?? 1) + 1,
    lastTimestamp: now.toISOString(),
  });
  return 'counted';
}

/** The apiserver's Event API. */
export function apiserverEvents(kc: KubeConfig): EventApi {
  const core = kc.makeApiClient(CoreV1Api);
  return {
    async create(namespace, body) {
      try {
        await core.createNamespacedEvent({ namespace, body });
        return 'created';
      } catch (err) {
        if (err instanceof ApiException && err.code === 409) return 'exists';
        throw err;
      }
    },
    async read(namespace, name) {
      try {
        return await core.readNamespacedEvent({ namespace, name });
      } catch (err) {
        if (err instanceof ApiException && err.code === 404) return undefined;
        throw err;
      }
    },
    async mergePatch(namespace, name, patch) {
      await core.patchNamespacedEvent(
        { namespace, name, body: patch },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    },
  };
}

export function createEventRecorder(kc: KubeConfig, component = 'etcd-conductor'): EventRecorder {
  const api = apiserverEvents(kc);
  return {
    async record({ ref, type, reason, message }) {
      await recordCounted(
        api,
        {
          involvedObject: {
            apiVersion: API_VERSION,
            kind: ETCD_CLUSTER.kind,
            name: ref.name,
            namespace: ref.namespace,
            uid: ref.uid,
          },
          type,
          reason,
          message,
          component,
        },
        callingActivity(),
        new Date(),
      );
    },
  };
}
