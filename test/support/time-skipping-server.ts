// Temporal's time-skipping test server (the Java one the SDK would download) started from the tool cache: workflow tests that wait hours of workflow time in seconds.
//
// The SDK's own launcher downloads the server from outside the registries and gives it 5 s to open its port,
// which a JVM on a loaded machine misses; so the jars come from Maven Central once (with mvn, into the tool
// cache), and the test starts the server here, waits for its port, and attaches as a time-skipping environment.
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { cacheRoot } from '../../localcluster/tool-cache';
import { opensWithin } from './service-route';

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

export interface TimeSkippingServer {
  env: TestWorkflowEnvironment;
  stop: () => Promise<void>;
}

/** The pom whose dependencies are the test server and what it needs. */
function pom(): string {
  return `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>local.etcd-conductor</groupId><artifactId>temporal-test-server-jars</artifactId><version>1</version>
<dependencies><dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>${TEST_SERVER_VERSION}</version></dependency></dependencies>
</project>
`;
}

/** Fetches the jars from Maven Central once (mvn), into a folder renamed into place only when complete. */
export function ensureTestServerJars(): string {
  const lib = testServerLib();
  if (existsSync(lib)) return lib;
  const work = `${lib}.partial-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'pom.xml'), pom());
  execFileSync(
    'mvn',
    [
      '-B',
      '-q',
      '-f',
      join(work, 'pom.xml'),
      'dependency:copy-dependencies',
      `-DoutputDirectory=${join(work, 'lib')}`,
    ],
    { stdio: 'inherit' },
  );
  try {
    renameSync(join(work, 'lib'), lib);
  } catch (err) {
    // Another test file fetched them at the same time: theirs are as good.
    if (!existsSync(lib)) throw err;
  }
  rmSync(work, { recursive: true, force: true });
  return lib;
}

/** Starts the server on a free loopback port and attaches a time-skipping environment to it. */
export async function startTimeSkippingServer(timeoutMs = 120_000): Promise<TimeSkippingServer> {
  const lib = ensureTestServerJars();
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
  while (!(await opensWithin('127.0.0.1', port, 1000))) {
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
