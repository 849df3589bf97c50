import { linesWithin } from './member-log-window';

const at = (iso: string) => Date.parse(iso);
const log = [
  '{"level":"info","ts":"2026-11-28T05:26:33.900000Z","caller":"a.go:1","msg":"before the window"}',
  '{"level":"warn","ts":"2026-11-28T05:26:34.100000Z","caller":"etcdserver/util.go:170","msg":"apply request took too long","took":"1.2s","expected-duration":"100ms"}',
  '{"level":"debug","ts":"2026-11-28T05:26:34.200000Z","caller":"b.go:2","msg":"debug is left out"}',
  'not json: a line the runtime wrote',
  '{"level":"info","ts":"2026-11-28T05:26:35.000000Z","caller":"raft/raft.go:9","msg":"elected leader","term":7}',
  '{"level":"info","ts":"not a time","msg":"unstamped"}',
  '{"level":"info","ts":"2026-11-28T05:26:36.100000Z","msg":"after the window"}',
].join('\n');

describe('linesWithin: the lines of an etcd member log inside a time window', () => {
  test.each([
    {
      what: 'warn and info inside, debug, unparsable and unstamped lines left out, caller dropped',
      from: '2026-11-28T05:26:34.000Z',
      to: '2026-11-28T05:26:36.000Z',
      max: 10,
      want: [
        '2026-11-28T05:26:34.100000Z warn apply request took too long {"took":"1.2s","expected-duration":"100ms"}',
        '2026-11-28T05:26:35.000000Z info elected leader {"term":7}',
      ],
    },
    {
      what: 'at most max lines: warnings and telling lines (an election) before plain ones, in time order',
      from: '2026-11-28T05:26:30.000Z',
      to: '2026-11-28T05:26:40.000Z',
      max: 2,
      want: [
        '2026-11-28T05:26:34.100000Z warn apply request took too long {"took":"1.2s","expected-duration":"100ms"}',
        '2026-11-28T05:26:35.000000Z info elected leader {"term":7}',
      ],
    },
    {
      what: 'then plain lines from the earliest',
      from: '2026-11-28T05:26:30.000Z',
      to: '2026-11-28T05:26:40.000Z',
      max: 3,
      want: [
        '2026-11-28T05:26:33.900000Z info before the window',
        '2026-11-28T05:26:34.100000Z warn apply request took too long {"took":"1.2s","expected-duration":"100ms"}',
        '2026-11-28T05:26:35.000000Z info elected leader {"term":7}',
      ],
    },
    {
      what: 'bounds are inclusive',
      from: '2026-11-28T05:26:35.000Z',
      to: '2026-11-28T05:26:35.000Z',
      max: 10,
      want: ['2026-11-28T05:26:35.000000Z info elected leader {"term":7}'],
    },
    {
      what: 'nothing in the window',
      from: '2026-11-28T06:00:00.000Z',
      to: '2026-11-28T06:01:00.000Z',
      max: 10,
      want: [],
    },
  ])('$what', ({ from, to, max, want }) => {
    expect(linesWithin(log, at(from), at(to), max)).toEqual(want);
  });
});
