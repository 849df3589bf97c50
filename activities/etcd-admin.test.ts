// etcd-admin's lookups and error mapping, with the etcd3 client replaced by a recording fake.
import { createEtcdAdmin } from './etcd-admin';

interface RawMember {
  ID: string;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

const cluster: {
  members: RawMember[];
  calls: string[];
  promoteError?: string;
  removeError?: string;
  addError?: string;
} = {
  members: [],
  calls: [],
};

jest.mock('etcd3', () => ({
  Etcd3: class {
    cluster = {
      memberList: async () => ({ header: { cluster_id: '777' }, members: cluster.members }),
      memberAdd: async (req: { peerURLs: string[]; isLearner: boolean }) => {
        cluster.calls.push(`memberAdd ${req.peerURLs.join(',')} learner=${req.isLearner}`);
        if (cluster.addError) throw new Error(cluster.addError);
        const member = {
          ID: '99',
          name: '',
          peerURLs: req.peerURLs,
          clientURLs: [],
          isLearner: req.isLearner,
        };
        cluster.members.push(member);
        return { member, members: cluster.members };
      },
      memberPromote: async (req: { ID: string }) => {
        cluster.calls.push(`memberPromote ${req.ID}`);
        if (cluster.promoteError) throw new Error(cluster.promoteError);
        return {};
      },
      memberRemove: async (req: { ID: string }) => {
        cluster.calls.push(`memberRemove ${req.ID}`);
        if (cluster.removeError) throw new Error(cluster.removeError);
        return {};
      },
    };
    close() {}
  },
}));

const URL3 = 'http://main-3.main-peer.prod.svc:2380';
const voter = (ID: string, name: string): RawMember => ({
  ID,
  name,
  peerURLs: [`http://${name}.main-peer.prod.svc:2380`],
  clientURLs: [],
  isLearner: false,
});

beforeEach(() => {
  cluster.members = [voter('1', 'main-0')];
  cluster.calls = [];
  delete cluster.promoteError;
  delete cluster.addError;
  delete cluster.removeError;
});

const admin = createEtcdAdmin();
const endpoints = ['http://main-0.main-peer.prod.svc:2379'];

describe('createEtcdAdmin', () => {
  it('addLearner adds a learner once and a retry finds the member it added by its peer URL', async () => {
    const first = await admin.addLearner(endpoints, URL3);
    const again = await admin.addLearner(endpoints, URL3);
    expect(first).toMatchObject({ member: { id: '99', isLearner: true, peerURLs: [URL3] } });
    expect(again).toMatchObject({ member: { id: '99' } });
    expect(cluster.calls).toEqual([`memberAdd ${URL3} learner=true`]);
  });

  it.each([
    ['etcd within its health interval', '14 UNAVAILABLE: etcdserver: unhealthy cluster', 'not-ready'],
    [
      'etcd short of started members',
      'etcdserver: re-configuration failed due to not enough started members',
      'not-ready',
    ],
  ])('addLearner reports %s as not-ready, not as a failure', async (_case, message, expected) => {
    cluster.addError = message;
    await expect(admin.addLearner(endpoints, URL3)).resolves.toBe(expected);
  });

  it('addLearner passes any other refusal on as an error', async () => {
    cluster.addError = 'etcdserver: too many learner members in cluster';
    await expect(admin.addLearner(endpoints, URL3)).rejects.toThrow(/too many learner/);
  });

  it.each([
    [
      'etcd says the learner is not in sync',
      'etcdserver: can only promote a learner member which is in sync with leader',
      'not-caught-up',
    ],
    ['etcd says the learner is not ready', 'etcdserver: learner member not ready', 'not-caught-up'],
  ])('promote answers not-caught-up when %s', async (_case, message, result) => {
    cluster.members.push({ ...voter('3', 'main-3'), isLearner: true });
    cluster.promoteError = message;
    await expect(admin.promote(endpoints, '3')).resolves.toBe(result);
  });

  it('promote is idempotent: a voter counts as promoted and an unknown id as not-found, without a promote call', async () => {
    await expect(admin.promote(endpoints, '1')).resolves.toBe('promoted');
    await expect(admin.promote(endpoints, '42')).resolves.toBe('not-found');
    expect(cluster.calls).toEqual([]);
  });

  it('promote passes other errors on for the retry policy', async () => {
    cluster.members.push({ ...voter('3', 'main-3'), isLearner: true });
    cluster.promoteError = 'etcdserver: request timed out';
    await expect(admin.promote(endpoints, '3')).rejects.toThrow('request timed out');
  });

  it('remove treats a member that is already gone as not-found, and passes other errors on', async () => {
    cluster.removeError = 'etcdserver: member not found';
    await expect(admin.remove(endpoints, '5')).resolves.toBe('not-found');
    cluster.removeError = 'etcdserver: re-configuration failed due to not enough started members';
    await expect(admin.remove(endpoints, '5')).rejects.toThrow('not enough started members');
  });
});
