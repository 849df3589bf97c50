// Runs the Temporal dev server of one stack on its host IP with a SQLite file in the state folder, so workflows survive a restart, and the operator's search attributes registered.
import { Connection } from '@temporalio/client';
import { join } from 'node:path';
import { isOk } from './http-probe';
import { startProcess, type ManagedProcess } from './managed-process';
import type { StackLayout } from './stack-layout';
import { waitFor } from './wait-for';

/** Search attributes the operator's workflows set; registered at every start (the dev server accepts re-registration). */
export const OPERATOR_SEARCH_ATTRIBUTES = {
  EtcdClusterNamespace: 'Keyword',
  EtcdClusterName: 'Keyword',
  EtcdClusterUID: 'Keyword',
  EtcdOperationType: 'Keyword',
} as const;

export const TEMPORAL_NAMESPACE = 'default';

/**
 * The dev server's internal services listen on `--ip` but dial each other on 127.0.0.1 (a limitation of
 * `temporal server start-dev`: with any other address no workflow can start), so every stack's Temporal binds
 * 127.0.0.1 and only its ports tell stacks apart (stack-layout.ts).
 */
export const TEMPORAL_IP = '127.0.0.1';

export function temporalAddress(layout: StackLayout): string {
  return `${TEMPORAL_IP}:${layout.ports.temporal}`;
}

export function temporalUiUrl(layout: StackLayout): string {
  return `http://${TEMPORAL_IP}:${layout.ports.temporalUi}`;
}

export function temporalArgs(layout: StackLayout): string[] {
  return [
    'server',
    'start-dev',
    `--ip=${TEMPORAL_IP}`,
    `--port=${layout.ports.temporal}`,
    `--ui-port=${layout.ports.temporalUi}`,
    // Fixed instead of the default random ports, so two stacks and a leftover check can reason about them.
    `--http-port=${layout.ports.temporalHttp}`,
    `--metrics-port=${layout.ports.temporalMetrics}`,
    `--db-filename=${layout.paths.temporalDb}`,
    `--namespace=${TEMPORAL_NAMESPACE}`,
    ...Object.entries(OPERATOR_SEARCH_ATTRIBUTES).map(([k, v]) => `--search-attribute=${k}=${v}`),
    '--log-level=warn',
  ];
}

/** Healthy means the frontend answers a gRPC call and the UI serves a page. */
export async function temporalHealthy(layout: StackLayout): Promise<boolean> {
  const connection = await Connection.connect({ address: temporalAddress(layout), connectTimeout: 2000 });
  try {
    await connection.workflowService.getSystemInfo({});
    const ns = await connection.workflowService.describeNamespace({ namespace: TEMPORAL_NAMESPACE });
    if (!ns.namespaceInfo) return false;
  } finally {
    await connection.close();
  }
  return isOk(temporalUiUrl(layout));
}

export async function startTemporalServer(layout: StackLayout, temporalBin: string): Promise<ManagedProcess> {
  const p = startProcess({
    name: 'temporal',
    command: temporalBin,
    args: temporalArgs(layout),
    cwd: layout.stateDir,
    logFile: join(layout.paths.logsDir, 'temporal.log'),
    stackDir: layout.stateDir,
  });
  try {
    await waitFor('the Temporal dev server to be healthy', () => temporalHealthy(layout), {
      timeoutMs: 60000,
      intervalMs: 500,
      process: p,
    });
  } catch (e) {
    await p.stop();
    throw e;
  }
  return p;
}
