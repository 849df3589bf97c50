// Job Pods run on the default stack's nodes and the job controller sees them finish, as in a real cluster.
import type { V1Job } from '@kubernetes/client-node';
import { connect, createNamespace, deleteNamespace, eventually, type Kube } from './kube';

const ETCD_IMAGE = 'quay.io/coreos/etcd:v3.6.16';

function job(name: string, command: string[]): V1Job {
  return {
    metadata: { name },
    spec: {
      backoffLimit: 0,
      template: {
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: ETCD_IMAGE, command }] },
      },
    },
  };
}

async function jobCondition(kube: Kube, ns: string, name: string): Promise<string | undefined> {
  const j = await kube.batch.readNamespacedJob({ namespace: ns, name });
  return j.status?.conditions?.find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  )?.type;
}

describe('Jobs on the stack nodes', () => {
  let kube: Kube;
  let ns: string;
  beforeAll(async () => {
    kube = connect();
    ns = await createNamespace(kube, 'jobs');
  });
  afterAll(() => deleteNamespace(kube, ns));

  it('a Job whose Pod exits 0 reports Complete and its Pod Succeeded with exit code 0', async () => {
    await kube.batch.createNamespacedJob({ namespace: ns, body: job('succeeds', ['etcdctl', 'version']) });
    let condition: string | undefined;
    await eventually(
      'the Job to finish',
      async () => (condition = await jobCondition(kube, ns, 'succeeds')) !== undefined,
      90000,
    );
    expect(condition).toBe('Complete');
    const pods = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'job-name=succeeds' });
    expect(pods.items[0]?.status?.phase).toBe('Succeeded');
    expect(pods.items[0]?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
    expect(pods.items[0]?.spec?.nodeName).toMatch(/^node-[abc]$/);
  });

  it('a Job whose Pod exits non-zero reports Failed and its Pod carries the exit code', async () => {
    await kube.batch.createNamespacedJob({
      namespace: ns,
      body: job('fails', ['etcdutl', 'snapshot', 'status', '/nonexistent/snapshot.db']),
    });
    let condition: string | undefined;
    await eventually(
      'the Job to finish',
      async () => (condition = await jobCondition(kube, ns, 'fails')) !== undefined,
      90000,
    );
    expect(condition).toBe('Failed');
    const pods = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'job-name=fails' });
    expect(pods.items[0]?.status?.phase).toBe('Failed');
    expect(pods.items[0]?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).not.toBe(0);
  });
});
