// membersRunning names each member's version, falling back to its Pod's image while it does not answer.
import { membersRunning } from './upgrade-halt';

const member = (name: string, version?: string) => ({
  id: name,
  name,
  isLearner: false,
  started: true,
  reachable: version !== undefined,
  ...(version ? { version } : {}),
});
const pod = (name: string, version: string) => ({
  name,
  pod: { phase: 'Running' as const, ready: true, terminating: false, uid: 'u', restartCount: 0, version },
});

describe('membersRunning', () => {
  test('lists every member with the version it reports, by name', () => {
    expect(
      membersRunning({
        etcd: { clusterId: '1', members: [member('m-1', '3.6.16'), member('m-0', '3.5.35')] },
        kube: [],
      }),
    ).toBe('members run: m-0 3.5.35, m-1 3.6.16');
  });
  test('a member that does not answer yet is named with its Pod image version', () => {
    expect(
      membersRunning({
        etcd: { clusterId: '1', members: [member('m-0', '3.5.35'), member('m-1')] },
        kube: [pod('m-1', '3.6.16')],
      }),
    ).toBe('members run: m-0 3.5.35, m-1 3.6.16');
  });
  test('without a member list it says so', () => {
    expect(membersRunning({ kube: [] })).toBe('members run: unknown (no member answered)');
  });
});
