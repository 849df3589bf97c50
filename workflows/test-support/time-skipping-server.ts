// Temporal's time-skipping test server (the Java one the SDK would download) started from the tool cache: workflow tests that wait hours of workflow time in seconds.
//
// The SDK's own launcher gives a server 5 s to open its port, which a JVM on a loaded machine misses; so the
// test starts it here, waits for the port, and attaches to it as a time-skipping environment.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { cacheRoot } from '../../localcluster/tool-cache';

/** The test server's version on Maven Central (io.temporal:temporal-test-server). */
export const TEST_SERVER_VERSION = '1.31.0';

/** Where its jars are: TEMPORAL_TEST_SERVER_LIB, else the tool cache (`npm run tools` puts them there). */
export function testServerLib(): string {
  return (
    process.env.TEMPORAL_TEST_SERVER_LIB ??
    join(cacheRoot(), 'tools', `temporal-test-server-${TEST_SERVER_VERSION}`, 'lib')
  );
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface TimeSkippingServer {
  env: TestWorkflowEnvironment;
  stop: () => Promise<void>;
}

/** Starts the server on a free loopback port and attaches a time-skipping environment to it. */
export async function startTimeSkippingServer(timeoutMs = 120_000): Promise<TimeSkippingServer> {
  const lib = testServerLib();
  if (!existsSync(lib)) {
    throw new Error(
      `no Temporal test server jars in ${lib}: run \`npm run tools\` (or set TEMPORAL_TEST_SERVER_LIB)`,
    );
  }
  const port = await freePort();
  const proc: ChildProcess = spawn(
    'java',
    ['-cp', `${lib}/*`, 'io.temporal.testserver.TestServer', String(port)],
    {
      stdio: 'ignore',
    },
  );
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const deadline = Date.now() + timeoutMs;
  while (!(await portOpen(port))) {
    if (proc.exitCode !== null) throw new Error(`the Temporal test server exited with ${proc.exitCode}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`the Temporal test server did not open port ${port} within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  // `create` is what createTimeSkipping calls once its own launcher has started the server.
  const create = (
    TestWorkflowEnvironment as unknown as {
      create: (opts: {
        server: { type: 'existing' };
        address: string;
        supportsTimeSkipping: boolean;
      }) => Promise<TestWorkflowEnvironment>;
    }
  ).create.bind(TestWorkflowEnvironment);
  const env = await create({
    server: { type: 'existing' },
    address: `127.0.0.1:${port}`,
    supportsTimeSkipping: true,
  });
  return {
    env,
    stop: async () => {
      await env.teardown();
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
