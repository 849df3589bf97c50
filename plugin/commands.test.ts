// The commands against an in-memory API (the objects as the apiserver returns them); test/plugin runs them for real.
import type { Client } from '@temporalio/client';
import type { EtcdCluster } from '../crds/etcd-cluster';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import type { PluginArgs } from './args';
import type { CustomObjects, PluginDeps } from './commands';
import { CommandFailed, runCommand } from './commands';

const args = (more: Partial<PluginArgs>): PluginArgs => ({
  command: 'status',
  cluster: 'main',
  output: 'table',
  wait: true,
  timeoutSeconds: 5,
  limit: 20,
  ...more,
});

function fakeApi(objects: Map<string, object>, onGet?: (key: string) => void) {
  const key = (plural: string, name: string) => `${plural}/${name}`;
  const created: object[] = [];
  const patches: { name: string; body: object }[] = [];
  const api: CustomObjects = {
    getNamespacedCustomObject: (r) => {
      onGet?.(key(r.plural, r.name));
      const o = objects.get(key(r.plural, r.name));
      return o
        ? Promise.resolve(structuredClone(o))
        : Promise.reject(Object.assign(new Error('not found'), { code: 404 }));
    },
    listNamespacedCustomObject: (r) =>
      Promise.resolve({
        items: [...objects].filter(([k]) => k.startsWith(`${r.plural}/`)).map(([, v]) => v),
      }),
    createNamespacedCustomObject: (r) => {
      const body = r.body as { metadata: { name: string } };
      created.push(body);
      objects.set(key(r.plural, body.metadata.name), body);
      return Promise.resolve(body);
    },
    // JSON Patch, as far as the plugin uses it: test and add on /metadata.
    patchNamespacedCustomObject: (r) => {
      patches.push({ name: r.name, body: r.body });
      const o = objects.get(key(r.plural, r.name)) as
        { metadata: Record<string, unknown> & { annotations?: Record<string, string> } } | undefined;
      if (!o) return Promise.reject(Object.assign(new Error('not found'), { code: 404 }));
      for (const op of r.body as { op: string; path: string; value: unknown }[]) {
        const [, , field, ...rest] = op.path.split('/');
        const sub = rest.join('/').replace(/~1/g, '/').replace(/~0/g, '~');
        if (op.op === 'test' && o.metadata[field ?? ''] !== op.value) {
          return Promise.reject(Object.assign(new Error('test failed'), { code: 422 }));
        }
        if (op.op === 'add' && sub)
          o.metadata.annotations = { ...o.metadata.annotations, [sub]: op.value as string };
        else if (op.op === 'add') o.metadata[field ?? ''] = op.value;
      }
      return Promise.resolve(o);
    },
  };
  return { api, created, patches };
}

function deps(api: CustomObjects, temporal?: Partial<Client>): PluginDeps & { lines: string[] } {
  const lines: string[] = [];
  let clock = Date.parse('2026-11-25T12:00:00Z');
  return {
    custom: api,
    temporal: () =>
      temporal ? Promise.resolve(temporal as Client) : Promise.reject(new Error('no Temporal here')),
    namespace: 'prod',
    out: (t) => lines.push(t),
    now: () => clock,
    sleep: (ms) => {
      clock += ms;
      return Promise.resolve();
    },
    lines,
  };
}

const cluster = (more: Partial<EtcdCluster['spec']> = {}, status: EtcdCluster['status'] = {}): EtcdCluster =>
  ({
    apiVersion: 'etcd.conductor.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: 'main', namespace: 'prod', generation: 1 },
    spec: { replicas: 3, version: '3.6.16', ...more },
    status,
  }) as EtcdCluster;

const destination = { pvc: { claimName: 'backups', subPath: '' } };

test('a cluster that is not there is a clear failure, naming the namespace', async () => {
  const { api } = fakeApi(new Map());
  await expect(runCommand(args({}), deps(api))).rejects.toThrow(
    new CommandFailed('no EtcdCluster "main" in namespace "prod" (kubectl get etcd -A lists them)'),
  );
});

test('status -o json prints the spec and status', async () => {
  const { api } = fakeApi(new Map([['etcdclusters/main', cluster({}, { readyReplicas: 3 })]]));
  const d = deps(api);
  await runCommand(args({ output: 'json' }), d);
  expect(JSON.parse(d.lines.join('\n'))).toMatchObject({
    metadata: { name: 'main' },
    status: { readyReplicas: 3 },
  });
});

describe('snapshot', () => {
  test('without spec.backup it says what to do, and creates nothing', async () => {
    const { api, created } = fakeApi(new Map([['etcdclusters/main', cluster()]]));
    await expect(runCommand(args({ command: 'snapshot' }), deps(api))).rejects.toThrow(
      'has no spec.backup.destination',
    );
    expect(created).toEqual([]);
  });

  test("creates an EtcdSnapshot into the cluster's backup destination and waits until it succeeded", async () => {
    const objects = new Map<string, object>([['etcdclusters/main', cluster({ backup: { destination } })]]);
    let reads = 0;
    const { api, created } = fakeApi(objects, (k) => {
      if (!k.startsWith('etcdsnapshots/')) return;
      // The operator finishes it on the third look.
      if (++reads === 3) {
        const s = objects.get(k) as EtcdSnapshot;
        s.status = {
          phase: 'Succeeded',
          artifact: {
            uri: 'pvc://backups/main-20261125120000.db',
            size: 4096,
            sha256: 'a',
            revision: 7,
            etcdVersion: '3.6.16',
            takenAt: '',
          },
        };
      }
    });
    const d = deps(api);
    await runCommand(args({ command: 'snapshot' }), d);
    expect(created).toEqual([
      expect.objectContaining({
        metadata: { name: 'main-20261125120000', namespace: 'prod' },
        spec: { clusterRef: { name: 'main' }, destination },
      }),
    ]);
    expect(d.lines).toEqual([
      'EtcdSnapshot main-20261125120000 Succeeded: revision 7, 4096 bytes, pvc://backups/main-20261125120000.db',
    ]);
  });

  test('a snapshot that failed fails the command with its reason', async () => {
    const objects = new Map<string, object>([['etcdclusters/main', cluster({ backup: { destination } })]]);
    const { api } = fakeApi(objects, (k) => {
      const s = objects.get(k) as EtcdSnapshot | undefined;
      if (k.startsWith('etcdsnapshots/') && s) {
        s.status = {
          phase: 'Failed',
          conditions: [
            {
              type: 'Ready',
              status: 'False',
              reason: 'DestinationNotFound',
              message: 'no claim backups',
              lastTransitionTime: '',
            },
          ],
        };
      }
    });
    await expect(runCommand(args({ command: 'snapshot' }), deps(api))).rejects.toThrow(
      'EtcdSnapshot main-20261125120000 failed: DestinationNotFound: no claim backups',
    );
  });

  test('a snapshot that does not finish in time fails the command, bounded by --timeout', async () => {
    const { api } = fakeApi(new Map([['etcdclusters/main', cluster({ backup: { destination } })]]));
    await expect(runCommand(args({ command: 'snapshot', timeoutSeconds: 3 }), deps(api))).rejects.toThrow(
      'not done within 3 s',
    );
  });
});

describe('cancel', () => {
  test('with no operation in flight there is nothing to cancel, and Temporal is not asked', async () => {
    const { api } = fakeApi(new Map([['etcdclusters/main', cluster()]]));
    await expect(runCommand(args({ command: 'cancel' }), deps(api))).rejects.toThrow(
      'no operation is in flight on prod/main: nothing to cancel',
    );
  });

  test('cancels the workflow of the operation in flight and waits for the status to say how it ended', async () => {
    const workflowId = 'etcdcluster/prod/main/op/4-scaleup';
    const objects = new Map<string, object>([
      [
        'etcdclusters/main',
        cluster({}, { currentOperation: { type: 'ScaleUp', workflowId, startedAt: '' } }),
      ],
    ]);
    const cancelled: string[] = [];
    const temporal = {
      workflow: {
        getHandle: (id: string) => ({
          cancel: () => {
            cancelled.push(id);
            (objects.get('etcdclusters/main') as EtcdCluster).status = {
              lastOperation: {
                type: 'ScaleUp',
                result: 'Cancelled',
                finishedAt: '',
                workflowId,
                message: 'main-3 removed again',
              },
            };
            return Promise.resolve();
          },
        }),
      },
    } as unknown as Partial<Client>;
    const { api } = fakeApi(objects);
    const d = deps(api, temporal);
    await runCommand(args({ command: 'cancel' }), d);
    expect(cancelled).toEqual([workflowId]);
    expect(d.lines.at(-1)).toBe('ScaleUp cancelled: main-3 removed again');
  });
});

test("backups lists a deleted cluster's snapshots too (they are what it is restored from)", async () => {
  const { api } = fakeApi(
    new Map([
      [
        'etcdsnapshots/old',
        { metadata: { name: 'old' }, spec: { clusterRef: { name: 'main' } }, status: { phase: 'Succeeded' } },
      ],
    ]),
  );
  const d = deps(api);
  await runCommand(args({ command: 'backups', output: 'json' }), d);
  expect(JSON.parse(d.lines.join(''))).toEqual([{ name: 'old', phase: 'Succeeded' }]);
});

describe('approve-recovery', () => {
  const lostStatus = (): EtcdCluster['status'] => ({
    conditions: [
      {
        type: 'Available',
        status: 'False',
        reason: 'PermanentQuorumLoss',
        message:
          '2 of 3 members lost their data for good (main-1, main-2), so a quorum cannot form again: ...',
        lastTransitionTime: '',
      },
    ],
    lastOperation: { type: 'ScaleUp', result: 'Succeeded', finishedAt: '', workflowId: 'op/3-scaleup' },
  });
  const lostCluster = (annotations?: Record<string, string>) => {
    const c = cluster({}, lostStatus());
    c.metadata.uid = 'uid-main';
    if (annotations) c.metadata.annotations = annotations;
    return c;
  };

  test("annotates the cluster with its own uid (testing the uid in the same patch) and waits for Recover's end", async () => {
    const objects = new Map<string, object>([['etcdclusters/main', lostCluster({ team: 'db' })]]);
    let reads = 0;
    const { api, patches } = fakeApi(objects, () => {
      const c = objects.get('etcdclusters/main') as EtcdCluster;
      // The operator sees the approval and the Recover ends on the third look after it.
      if (c.metadata.annotations?.['etcd.conductor.dev/approve-recovery'] && ++reads === 3) {
        c.status = {
          ...c.status,
          lastOperation: {
            type: 'Recover',
            result: 'Succeeded',
            finishedAt: '',
            workflowId: 'op/4-recover',
            message: 'rebuilt from main-0; revisions 121..150 (30) are gone',
          },
        };
      }
    });
    const d = deps(api);
    await runCommand(args({ command: 'approve-recovery' }), d);
    expect(patches).toEqual([
      {
        name: 'main',
        body: [
          { op: 'test', path: '/metadata/uid', value: 'uid-main' },
          {
            op: 'add',
            path: '/metadata/annotations/etcd.conductor.dev~1approve-recovery',
            value: 'uid-main',
          },
        ],
      },
    ]);
    const annotations = (objects.get('etcdclusters/main') as EtcdCluster).metadata.annotations;
    expect(annotations).toEqual({ team: 'db', 'etcd.conductor.dev/approve-recovery': 'uid-main' });
    expect(d.lines[0]).toMatch(
      /^approved the recovery of prod\/main \(etcd.conductor.dev\/approve-recovery=uid-main\): 2 of 3/,
    );
    expect(d.lines.at(-1)).toBe(
      'Recover op/4-recover Succeeded: rebuilt from main-0; revisions 121..150 (30) are gone',
    );
  });

  test("with no survivor it waits for the Rebuild's end", async () => {
    const objects = new Map<string, object>([['etcdclusters/main', lostCluster()]]);
    const { api } = fakeApi(objects, () => {
      const c = objects.get('etcdclusters/main') as EtcdCluster;
      if (c.metadata.annotations?.['etcd.conductor.dev/approve-recovery']) {
        c.status = {
          ...c.status,
          lastOperation: {
            type: 'Rebuild',
            result: 'Succeeded',
            finishedAt: '',
            workflowId: 'op/4-rebuild',
            message: 'rebuilt in place from snapshot s at revision 90',
          },
        };
      }
    });
    const d = deps(api);
    await runCommand(args({ command: 'approve-recovery' }), d);
    expect(d.lines.at(-1)).toBe(
      'Rebuild op/4-rebuild Succeeded: rebuilt in place from snapshot s at revision 90',
    );
  });

  test('a cluster without annotations gets the whole map', async () => {
    const { api, patches } = fakeApi(new Map([['etcdclusters/main', lostCluster()]]));
    await runCommand(args({ command: 'approve-recovery', wait: false }), deps(api));
    expect(patches[0]?.body).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-main' },
      {
        op: 'add',
        path: '/metadata/annotations',
        value: { 'etcd.conductor.dev/approve-recovery': 'uid-main' },
      },
    ]);
  });

  test('a cluster that does not report a permanent loss is refused, and nothing is written', async () => {
    const c = cluster(
      {},
      {
        conditions: [
          { type: 'Available', status: 'False', reason: 'QuorumLost', message: '', lastTransitionTime: '' },
        ],
      },
    );
    c.metadata.uid = 'uid-main';
    const { api, patches } = fakeApi(new Map([['etcdclusters/main', c]]));
    await expect(runCommand(args({ command: 'approve-recovery' }), deps(api))).rejects.toThrow(
      'prod/main does not report a permanent quorum loss (Available: False QuorumLost): nothing to approve',
    );
    expect(patches).toEqual([]);
  });

  test('a Recover that fails fails the command with its message', async () => {
    const objects = new Map<string, object>([['etcdclusters/main', lostCluster()]]);
    const { api } = fakeApi(objects, () => {
      const c = objects.get('etcdclusters/main') as EtcdCluster;
      if (c.metadata.annotations) {
        c.status = {
          ...c.status,
          lastOperation: {
            type: 'Recover',
            result: 'Failed',
            finishedAt: '',
            workflowId: 'op/4-recover',
            message: 'no answer',
          },
        };
      }
    });
    await expect(runCommand(args({ command: 'approve-recovery' }), deps(api))).rejects.toThrow(
      'Recover op/4-recover ended Failed: no answer',
    );
  });

  test('a Recover that does not end in time fails the command, bounded by --timeout', async () => {
    const { api } = fakeApi(new Map([['etcdclusters/main', lostCluster()]]));
    await expect(
      runCommand(args({ command: 'approve-recovery', timeoutSeconds: 3 }), deps(api)),
    ).rejects.toThrow('recovery of prod/main: not done within 3 s');
  });
});
