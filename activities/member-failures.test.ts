import { reportsLostRaftLog } from './member-failures';

// The tails below are cut from what etcd 3.6.16 and 3.5.35 printed when restarted on a wiped data dir
// (`--initial-cluster-state existing`) while the other two members of their cluster kept running.
const ETCD_36_TAIL = [
  '{"level":"panic","msg":"tocommit(13) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?"}',
  'panic: tocommit(13) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?',
  '',
  'goroutine 14 [running]:',
  'go.etcd.io/raft/v3.(*raftLog).commitTo(0x39c00eb96140, 0xd)',
  '\tgo.etcd.io/raft/v3@v3.6.0/log.go:324 +0xef',
].join('\n');
const TRACE_ONLY = [
  'go.etcd.io/raft/v3.(*raftLog).commitTo(0x39c00eb96140, 0xd)',
  '\tgo.etcd.io/raft/v3@v3.6.0/log.go:324 +0xef',
  'go.etcd.io/raft/v3.(*raft).handleHeartbeat(0x39c00ea32900, {0x8, ...})',
].join('\n');

describe('reportsLostRaftLog', () => {
  test.each<[string, string | undefined, boolean]>([
    ['no message (the container never terminated)', undefined, false],
    ['an empty message', '', false],
    ['etcd 3.6 restarted on an emptied data dir', ETCD_36_TAIL, true],
    [
      'etcd 3.5 restarted on an emptied data dir',
      'panic: tocommit(13) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?',
      true,
    ],
    ['a truncated log (lastIndex not 0) is lost too', 'tocommit(900) is out of range [lastIndex(412)]', true],
    ['the panic line cut off, the panicking frame kept', TRACE_ONLY, true],
    [
      'a bad flag is not data loss',
      '{"level":"fatal","msg":"failed to verify flags","error":"unknown flag: --quota-backend"}',
      false,
    ],
    [
      'etcd started as a first-time joiner: its WAL is gone and its old --initial-cluster no longer matches',
      '{"level":"fatal","caller":"etcdmain/etcd.go:183","msg":"discovery failed","error":"error validating peerURLs {ClusterID:f4a427819a847f19 Members:[...] RemovedMemberIDs:[]}: member count is unequal"}',
      true,
    ],
    [
      'an initial member started together (--initial-cluster-state=new) restarted on an emptied data dir',
      '{"level":"fatal","caller":"etcdmain/etcd.go:204","msg":"discovery failed","error":"member 8e9e05c52164694d has already been bootstrapped"}',
      true,
    ],
    [
      'a peer that cannot be reached is not data loss',
      '{"level":"fatal","msg":"discovery failed","error":"cannot fetch cluster info from peer urls"}',
      false,
    ],
    [
      'a corrupt bbolt file is reported by etcd differently and left to a person',
      'panic: assertion failed: Page expected to be: 7, but self identifies as 0',
      false,
    ],
  ])('%s', (_name, message, expected) => {
    expect(reportsLostRaftLog(message)).toBe(expected);
  });
});
