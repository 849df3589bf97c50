// What the workflow tests share: the Temporal dev server the local stack builds (no download) with the project's search attributes, the workflow bundle, and polling of the fake world.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { cacheRoot, toolPaths } from '../../localcluster/tool-cache';
import { SearchAttributes } from '../messages';

/** Starting the server and bundling take this long at most on a loaded machine (a beforeAll timeout). */
export const DEV_SERVER_START_TIMEOUT_MS = 180_000;

export interface DevServer {
  env: TestWorkflowEnvironment;
  workflowBundle: WorkflowBundleWithSourceMap;
}

/** One dev server per test file; the caller tears `env` down in afterAll. */
export async function startDevServer(): Promise<DevServer> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: {
        type: 'existing-path',
        path: process.env.TEMPORAL_CLI_PATH ?? toolPaths(cacheRoot()).temporal,
      },
      searchAttributes: Object.values(SearchAttributes),
    },
  });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../index'),
    logger: new DefaultLogger('WARN'),
  });
  return { env, workflowBundle };
}

/** Polls a synchronous probe of the fake world every 100 ms until it returns a value. */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
