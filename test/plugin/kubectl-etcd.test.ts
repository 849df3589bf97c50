// kubectl etcd against the live stack, run the way users run it: kubectl finds kubectl-etcd on the PATH. Its member
// table matches etcd's own member list (ids in hex), snapshot waits until the backup is safe in MinIO, backups
// lists it, ops reads the operations from Temporal, cancel stops an operation in flight, and bad input exits
// with the documented codes.
import { createCredentialsSecret, minioDestination, waitVerified } from '../backup/backup-harness';
import type { Harness } from '../support/cluster-harness';
import { installKubectlEtcd, type KubectlEtcd } from '../support/kubectl-etcd';
import {
  connect,
  createCluster,
  etcdMemberList,
  eventually,
  freshNamespace,
  getCluster,
  waitConverged,
} from '../support/cluster-harness';

jest.setTimeout(600_000);

let h: Harness;
let kubectlEtcdShim: KubectlEtcd;
beforeAll(() => {
  h = connect();
  kubectlEtcdShim = installKubectlEtcd(h, 300_000);
});
afterAll(() => kubectlEtcdShim.remove());

const kubectlEtcd = (...args: string[]) => kubectlEtcdShim.runSync(...args);

test('status, snapshot, backups and ops on a live cluster', async () => {
  const ns = await freshNamespace(h, 'plugin');
  await createCredentialsSecret(h, ns, 's3-credentials');
  await createCluster(h, ns, 'main', {
    replicas: 3,
    backup: { destination: minioDestination(h, 's3-credentials', `e2e/${ns}`) },
  });
  await waitConverged(h, ns, 'main', 3, 300_000);
  const leader = await eventually(
    'status names the leader',
    async () => (await getCluster(h, ns, 'main')).status?.leader,
  );

  const status = kubectlEtcd('status', 'main', '-n', ns);
  expect(status).toMatchObject({ code: 0, stderr: '' });
  expect(status.stdout).toContain(`Leader:    ${leader}`);
  // One row per member etcd lists, its id as etcdctl prints it (hex), its role, and the leader marked.
  const rows = status.stdout
    .split('\n')
    .filter((l) => /^main-\d /.test(l))
    .map((l) => l.split(/\s{3,}/));
  const etcd = await etcdMemberList(ns, 'main');
  expect(
    rows
      .map(([name, id, role, , isLeader]) => ({ name, id, role, isLeader }))
      .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '')),
  ).toEqual(
    etcd
      .map((m) => ({
        name: m.name,
        id: BigInt(m.id).toString(16),
        role: m.isLearner ? 'learner' : 'voter',
        isLeader: String(m.name === leader),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  );

  const json = JSON.parse(kubectlEtcd('status', 'main', '-n', ns, '-o', 'json').stdout) as {
    status: { members: unknown[] };
  };
  expect(json.status.members).toHaveLength(3);

  const snap = kubectlEtcd('snapshot', 'main', '-n', ns, '--timeout', '240');
  expect(snap).toMatchObject({ code: 0, stderr: '' });
  const [, snapName, revision, uri] =
    /^EtcdSnapshot (\S+) Succeeded: revision (\d+), \d+ bytes, (\S+)$/m.exec(snap.stdout) ?? [];
  expect(uri).toBe(`s3://${h.stack.s3.bucket}/e2e/${ns}/${snapName}.db`);
  expect(Number(revision)).toBeGreaterThan(0);

  // The stored snapshot is checked after upload: backups shows the verdict once the check has ended.
  await waitVerified(h, ns, snapName ?? '');
  const backups = kubectlEtcd('backups', 'main', '-n', ns, '-o', 'json');
  expect(backups.code).toBe(0);
  expect(JSON.parse(backups.stdout)).toEqual([
    {
      name: snapName,
      phase: 'Succeeded',
      verified: 'True',
      artifact: expect.objectContaining({ uri, revision: Number(revision) }),
    },
  ]);

  const ops = kubectlEtcd('ops', 'main', '-n', ns);
  expect(ops).toMatchObject({ code: 0, stderr: '' });
  expect(ops.stdout).toMatch(
    new RegExp(`^etcdcluster/${ns}/main/op/\\d+-bootstrap +Bootstrap +COMPLETED `, 'm'),
  );

  // Nothing in flight: nothing to cancel, and the exit code says so.
  const idle = kubectlEtcd('cancel', 'main', '-n', ns);
  expect(idle).toMatchObject({ code: 1, stdout: '' });
  expect(idle.stderr).toBe(`error: no operation is in flight on ${ns}/main: nothing to cancel\n`);
  await h.core.deleteNamespace({ name: ns });
});

test('cancel stops an operation in flight and waits until the status says Cancelled', async () => {
  const ns = await freshNamespace(h, 'plugin-cancel');
  // No image exists for 3.6.1: the bootstrap waits on ImagePullFailed until someone acts.
  await createCluster(h, ns, 'stuck', { replicas: 1, version: '3.6.1' });
  const op = await eventually(
    'the bootstrap in flight',
    async () => (await getCluster(h, ns, 'stuck')).status?.currentOperation,
    120_000,
  );

  const cancel = kubectlEtcd('cancel', 'stuck', '-n', ns, '--timeout', '120');
  expect(cancel.stderr).toBe('');
  expect(cancel.stdout).toContain(`asked Bootstrap (${op.workflowId}) to cancel`);
  expect(cancel.stdout).toMatch(/^Bootstrap cancelled/m);
  expect(cancel.code).toBe(0);
  expect((await getCluster(h, ns, 'stuck')).status?.lastOperation).toMatchObject({
    workflowId: op.workflowId,
    result: 'Cancelled',
  });
  await h.core.deleteNamespace({ name: ns });
});

test('bad input: an unknown cluster exits 1, a bad command line exits 2, --help exits 0', () => {
  expect(kubectlEtcd('status', 'no-such-cluster', '-n', 'default')).toMatchObject({
    code: 1,
    stderr:
      'error: no EtcdCluster "no-such-cluster" in namespace "default" (kubectl get etcd -A lists them)\n',
  });
  expect(kubectlEtcd('frobnicate', 'main')).toMatchObject({ code: 2 });
  expect(kubectlEtcd('frobnicate', 'main').stderr).toContain('unknown command "frobnicate"');
  const help = kubectlEtcd('--help');
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('Usage: kubectl etcd <command> <cluster>');
});
