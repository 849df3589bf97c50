import { groupLines, machineLines, stackLogLines } from './suite-report';

const file = (name: string, status: string, tests: Array<[string, string, string?]>, message = '') => ({
  name: `/repo/${name}`,
  status,
  message,
  endTime: 61_000,
  assertionResults: tests.map(([title, s, failure]) => ({
    title,
    status: s,
    failureMessages: failure ? [failure] : [],
  })),
});
const result = (files: ReturnType<typeof file>[], extra: Record<string, unknown> = {}) => ({
  success: files.every((f) => f.status === 'passed'),
  startTime: 1_000,
  numTotalTests: files.reduce((n, f) => n + f.assertionResults.length, 0),
  numFailedTests: files.reduce(
    (n, f) => n + f.assertionResults.filter((a) => a.status === 'failed').length,
    0,
  ),
  numPendingTests: 0,
  numTodoTests: 0,
  wasInterrupted: false,
  testResults: files,
  ...extra,
});

describe('groupLines', () => {
  test.each([
    [
      'a group that passed is one line, with its time',
      result([file('test/a.test.ts', 'passed', [['one', 'passed']])]),
      ['  alone             1 files, 1 tests: all passed (60 s)'],
    ],
    [
      'a failed test is named with its file and the first line of its message (colours stripped)',
      result([
        file('test/a.test.ts', 'failed', [
          ['waits', 'failed', '\n\x1b[31mtimed out waiting for both replicas\x1b[0m\n  at eventually'],
          ['passes', 'passed'],
        ]),
      ]),
      [
        '  alone             1 files, 2 tests: 1 files and 1 tests FAILED (60 s)',
        '    FAIL test/a.test.ts > waits: timed out waiting for both replicas',
      ],
    ],
    [
      'a file that failed to run is named by its own message',
      result([file('test/b.test.ts', 'failed', [], '  ● Test suite failed to run\n\n    cannot run helm')]),
      [
        '  alone             1 files, 0 tests: 1 files and 0 tests FAILED (60 s)',
        '    FAIL test/b.test.ts: ● Test suite failed to run',
      ],
    ],
    [
      'skipped tests are counted even when all ran passed',
      result([file('test/a.test.ts', 'passed', [['one', 'passed']])], { numPendingTests: 2 }),
      ['  alone             1 files, 1 tests: all passed, 2 skipped (60 s)'],
    ],
    ['a group no file matched says so', result([]), ['  alone             no file matched']],
  ])('%s', (_name, r, expected) => {
    expect(groupLines('alone', r, '/repo')).toEqual(expected);
  });

  it('names at most six failures and counts the rest', () => {
    const tests = Array.from({ length: 9 }, (_, i): [string, string, string] => [`t${i}`, 'failed', 'boom']);
    const lines = groupLines('realnodes-alone', result([file('test/c.test.ts', 'failed', tests)]), '/repo');
    expect(lines).toHaveLength(1 + 6 + 1);
    expect(lines.at(-1)).toBe('    ... and 3 more failed');
  });

  it('clips a long message so one failure stays one line', () => {
    const r = result([file('test/a.test.ts', 'failed', [['long', 'failed', 'x'.repeat(500)]])]);
    const line = groupLines('unit', r, '/repo')[1] ?? '';
    expect(line.length).toBe(220);
    expect(line.endsWith('...')).toBe(true);
  });
});

describe('machineLines and stackLogLines', () => {
  it('gives load, disk and memory in one line', () => {
    expect(
      machineLines({
        load: [22.14, 10, 5.55],
        diskFreeBytes: 0.5 * 2 ** 30,
        diskTotalBytes: 252 * 2 ** 30,
        memFreeBytes: 11.8 * 2 ** 30,
        memTotalBytes: 23.5 * 2 ** 30,
      }),
    ).toEqual(['  load 22.1 10.0 5.5; disk 0.5 GB free of 252.0 GB; memory 11.8 GB available of 23.5 GB']);
  });
  it("keeps the daemon's last lines but the provisioner's per-claim ones", () => {
    const log = [
      '2026-11-29T00:01Z supervisor: coredns exited (1), restarting',
      '2026-11-29T00:02Z host provisioner: pvc-1 for ns/data-a-0 on node-a',
      '2026-11-29T00:03Z host names: connect ECONNREFUSED 127.0.0.1:6443',
      '',
    ].join('\n');
    expect(stackLogLines(log, 8)).toEqual([
      '  2026-11-29T00:01Z supervisor: coredns exited (1), restarting',
      '  2026-11-29T00:03Z host names: connect ECONNREFUSED 127.0.0.1:6443',
    ]);
  });
});
