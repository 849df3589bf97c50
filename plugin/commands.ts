// Each command of kubectl etcd: reads (and for snapshot and cancel, asks for) what the operator records, through
// the Kubernetes API and Temporal. Failures are CommandFailed with a message that says what to do.
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { SearchAttributes, WorkflowTypes } from '../contracts/messages';
import type { EtcdCluster } from '../crds/etcd-cluster';
import { API_GROUP, API_VERSION, API_VERSION_NAME, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import { Reasons } from '../crds/conditions';
import { Annotations } from '../crds/labels';
import { ETCD_SNAPSHOT } from '../crds/etcd-snapshot';
import type { PluginArgs } from './args';
import type { OperationRow } from './views';
import {
  clusterSnapshots,
  manualSnapshotName,
  renderBackups,
  renderOperations,
  renderStatus,
  verifiedOf,
} from './views';

export class CommandFailed extends Error {}

/** The part of the Kubernetes client's CustomObjectsApi the plugin uses. */
export interface CustomObjects {
  getNamespacedCustomObject(req: {
    group: string;
    version: string;
    namespace: string;
    plural: string;
    name: string;
  }): Promise<unknown>;
  listNamespacedCustomObject(req: {
    group: string;
    version: string;
    namespace: string;
    plural: string;
  }): Promise<unknown>;
  createNamespacedCustomObject(req: {
    group: string;
    version: string;
    namespace: string;
    plural: string;
    body: object;
  }): Promise<unknown>;
  /** A JSON Patch (the client's default content type for this call). */
  patchNamespacedCustomObject(req: {
    group: string;
    version: string;
    namespace: string;
    plural: string;
    name: string;
    body: object;
  }): Promise<unknown>;
}

export interface PluginDeps {
  custom: CustomObjects;
  /** Connects on first use (only ops and cancel need Temporal). */
  temporal: () => Promise<Client>;
  namespace: string;
  out: (text: string) => void;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

const POLL_MS = 1000;

function httpCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown };
  const code = typeof e.code === 'number' ? e.code : e.statusCode;
  return typeof code === 'number' ? code : undefined;
}

async function readCluster(deps: PluginDeps, name: string): Promise<EtcdCluster> {
  try {
    return (await deps.custom.getNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION_NAME,
      namespace: deps.namespace,
      plural: ETCD_CLUSTER.plural,
      name,
    })) as EtcdCluster;
  } catch (err) {
    if (httpCode(err) === 404) {
      throw new CommandFailed(
        `no EtcdCluster "${name}" in namespace "${deps.namespace}" (kubectl get etcd -A lists them)`,
      );
    }
    throw err;
  }
}

async function listSnapshots(deps: PluginDeps): Promise<EtcdSnapshot[]> {
  const list = (await deps.custom.listNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION_NAME,
    namespace: deps.namespace,
    plural: ETCD_SNAPSHOT.plural,
  })) as { items?: EtcdSnapshot[] };
  return list.items ?? [];
}

async function readSnapshot(deps: PluginDeps, name: string): Promise<EtcdSnapshot> {
  return (await deps.custom.getNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION_NAME,
    namespace: deps.namespace,
    plural: ETCD_SNAPSHOT.plural,
    name,
  })) as EtcdSnapshot;
}

const print = (deps: PluginDeps, args: PluginArgs, json: unknown, table: () => string) =>
  deps.out(args.output === 'json' ? JSON.stringify(json, null, 2) : table());

async function status(args: PluginArgs, deps: PluginDeps): Promise<void> {
  const c = await readCluster(deps, args.cluster);
  print(
    deps,
    args,
    {
      metadata: { name: c.metadata.name, namespace: c.metadata.namespace, generation: c.metadata.generation },
      spec: c.spec,
      status: c.status ?? {},
    },
    () => renderStatus(c, deps.now()),
  );
}

function operationRow(info: WorkflowExecutionInfo, cluster: EtcdCluster): OperationRow {
  const type = info.typedSearchAttributes.get(SearchAttributes.operationType);
  const current = cluster.status?.currentOperation;
  return {
    workflowId: info.workflowId,
    ...(type ? { type } : {}),
    status: info.status.name,
    startTime: info.startTime.toISOString(),
    ...(info.closeTime ? { closeTime: info.closeTime.toISOString() } : {}),
    ...(current?.workflowId === info.workflowId && current.step ? { step: current.step } : {}),
  };
}

async function ops(args: PluginArgs, deps: PluginDeps): Promise<void> {
  const cluster = await readCluster(deps, args.cluster);
  const client = await deps.temporal();
  const query =
    `${SearchAttributes.clusterNamespace.name} = '${deps.namespace}' AND ` +
    `${SearchAttributes.clusterName.name} = '${args.cluster}' AND ` +
    `WorkflowType IN ('${WorkflowTypes.operation}', '${WorkflowTypes.snapshot}')`;
  const rows: OperationRow[] = [];
  for await (const info of client.workflow.list({ query })) {
    rows.push(operationRow(info, cluster));
    if (rows.length >= args.limit) break;
  }
  print(deps, args, rows, () => renderOperations(rows, deps.now()));
}

async function waitFor<T>(
  deps: PluginDeps,
  args: PluginArgs,
  what: string,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = deps.now() + args.timeoutSeconds * 1000;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (deps.now() >= deadline) {
      throw new CommandFailed(`${what}: not done within ${args.timeoutSeconds} s (--timeout to wait longer)`);
    }
    await deps.sleep(POLL_MS);
  }
}

async function cancel(args: PluginArgs, deps: PluginDeps): Promise<void> {
  const cluster = await readCluster(deps, args.cluster);
  const op = cluster.status?.currentOperation;
  if (!op) {
    throw new CommandFailed(
      `no operation is in flight on ${deps.namespace}/${args.cluster}: nothing to cancel`,
    );
  }
  const client = await deps.temporal();
  await client.workflow.getHandle(op.workflowId).cancel();
  deps.out(`asked ${op.type} (${op.workflowId}) to cancel; it undoes its unfinished step and stops`);
  if (!args.wait) return;
  const last = await waitFor(deps, args, `cancel of ${op.workflowId}`, async () => {
    const s = (await readCluster(deps, args.cluster)).status;
    return s?.lastOperation?.workflowId === op.workflowId ? s.lastOperation : undefined;
  });
  deps.out(
    last.result === 'Cancelled'
      ? `${last.type} cancelled${last.message ? `: ${last.message}` : ''}`
      : `${last.type} ended ${last.result} before the cancel reached it${last.message ? `: ${last.message}` : ''}`,
  );
}

async function snapshot(args: PluginArgs, deps: PluginDeps): Promise<void> {
  const cluster = await readCluster(deps, args.cluster);
  const destination = cluster.spec.backup?.destination;
  if (!destination) {
    throw new CommandFailed(
      `${deps.namespace}/${args.cluster} has no spec.backup.destination: set one, or create an EtcdSnapshot with its own destination (docs/backup-restore.md)`,
    );
  }
  const name = manualSnapshotName(args.cluster, deps.now());
  await deps.custom.createNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION_NAME,
    namespace: deps.namespace,
    plural: ETCD_SNAPSHOT.plural,
    body: {
      apiVersion: API_VERSION,
      kind: ETCD_SNAPSHOT.kind,
      metadata: { name, namespace: deps.namespace },
      spec: { clusterRef: { name: args.cluster }, destination },
    },
  });
  if (!args.wait) {
    deps.out(`EtcdSnapshot ${name} created`);
    return;
  }
  const done = await waitFor(deps, args, `EtcdSnapshot ${name}`, async () => {
    const s = await readSnapshot(deps, name);
    return s.status?.phase === 'Succeeded' || s.status?.phase === 'Failed' ? s : undefined;
  });
  const artifact = done.status?.artifact;
  if (done.status?.phase === 'Failed' || !artifact) {
    const ready = done.status?.conditions?.find((c) => c.type === 'Ready');
    throw new CommandFailed(
      `EtcdSnapshot ${name} failed: ${ready?.reason ?? 'Failed'}: ${ready?.message ?? ''}`,
    );
  }
  print(
    deps,
    args,
    done,
    () =>
      `EtcdSnapshot ${name} Succeeded: revision ${artifact.revision}, ${artifact.size} bytes, ${artifact.uri}`,
  );
}

async function backups(args: PluginArgs, deps: PluginDeps): Promise<void> {
  await readCluster(deps, args.cluster).catch((err: unknown) => {
    // Snapshots outlive their cluster: they are what a deleted cluster is restored from.
    if (!(err instanceof CommandFailed)) throw err;
  });
  const mine = clusterSnapshots(await listSnapshots(deps), args.cluster);
  print(
    deps,
    args,
    mine.map((s) => ({
      name: s.metadata.name,
      phase: s.status?.phase ?? 'Pending',
      verified: verifiedOf(s),
      artifact: s.status?.artifact,
    })),
    () => renderBackups(mine, deps.now()),
  );
}

/** `~` and `/` escaped for a JSON Pointer (RFC 6901). */
const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Approves the recovery the operator offers after a permanent quorum loss: annotates the cluster with its own uid
 * (read here, so the approval can only ever name this object; the patch tests the uid too, so an object created
 * again under the name in between is not approved), then waits for the Recover (or, with no survivor, Rebuild)
 * operation to end.
 */
async function approveRecovery(args: PluginArgs, deps: PluginDeps): Promise<void> {
  const cluster = await readCluster(deps, args.cluster);
  const uid = cluster.metadata.uid;
  const where = `${deps.namespace}/${args.cluster}`;
  if (!uid) throw new CommandFailed(`${where} has no uid: cannot name it in the approval`);
  const available = cluster.status?.conditions?.find((c) => c.type === 'Available');
  if (available?.reason !== Reasons.PermanentQuorumLoss) {
    throw new CommandFailed(
      `${where} does not report a permanent quorum loss (Available: ${available ? `${available.status} ${available.reason}` : 'no status yet'}): nothing to approve`,
    );
  }
  const before = cluster.status?.lastOperation?.workflowId;
  const annotations = cluster.metadata.annotations;
  await deps.custom.patchNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION_NAME,
    namespace: deps.namespace,
    plural: ETCD_CLUSTER.plural,
    name: args.cluster,
    body: [
      { op: 'test', path: '/metadata/uid', value: uid },
      annotations
        ? { op: 'add', path: `/metadata/annotations/${pointer(Annotations.approveRecovery)}`, value: uid }
        : { op: 'add', path: '/metadata/annotations', value: { [Annotations.approveRecovery]: uid } },
    ],
  });
  deps.out(`approved the recovery of ${where} (${Annotations.approveRecovery}=${uid}): ${available.message}`);
  if (!args.wait) return;
  const last = await waitFor(deps, args, `recovery of ${where}`, async () => {
    const s = (await readCluster(deps, args.cluster)).status;
    const op = s?.lastOperation;
    // Recover from a survivor, or Rebuild from the backup when no member kept its data.
    const ours = op?.type === 'Recover' || op?.type === 'Rebuild';
    return op && ours && op.workflowId !== before ? op : undefined;
  });
  if (last.result !== 'Succeeded') {
    throw new CommandFailed(`${last.type} ${last.workflowId} ended ${last.result}: ${last.message ?? ''}`);
  }
  deps.out(`${last.type} ${last.workflowId} Succeeded: ${last.message ?? ''}`);
}

export async function runCommand(args: PluginArgs, deps: PluginDeps): Promise<void> {
  switch (args.command) {
    case 'status':
      return status(args, deps);
    case 'ops':
      return ops(args, deps);
    case 'cancel':
      return cancel(args, deps);
    case 'snapshot':
      return snapshot(args, deps);
    case 'backups':
      return backups(args, deps);
    case 'approve-recovery':
      return approveRecovery(args, deps);
  }
}
