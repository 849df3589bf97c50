import {
  messageBytesPerContainer,
  tailOfLog,
  terminationMessage,
  truncateMessage,
} from './termination-message';
import type { TerminationMessageInput } from './termination-message';

const lines = (n: number, from = 1): string =>
  Array.from({ length: n }, (_, i) => `line ${i + from}\n`).join('');

describe('tailOfLog', () => {
  const cases: Array<[string, string, number, number, string]> = [
    ['an empty log has an empty tail', '', 80, 2048, ''],
    ['a short log is kept whole', 'a\nb\n', 80, 2048, 'a\nb\n'],
    ['only the last N lines are kept', 'a\nb\nc\n', 2, 2048, 'b\nc\n'],
    ['a last line without newline counts as a line', 'a\nb\nc', 2, 2048, 'b\nc'],
    ['an empty line counts as a line', 'a\n\nc\n', 2, 2048, '\nc\n'],
    ['a leading empty line is reached when all lines are asked for', '\nx\n', 5, 2048, '\nx\n'],
    ['the byte cap cuts the front of the kept lines', 'a\n0123456789\n', 80, 5, '6789\n'],
    ['the byte cap applies after the line cap', 'aaaa\nbb\n', 1, 5, 'bb\n'],
    ['of 100 lines the last 80 are kept', lines(100), 80, 2048, lines(80, 21)],
  ];
  it.each(cases)('%s', (_name, log, n, bytes, expected) => {
    expect(tailOfLog(Buffer.from(log), n, bytes).toString()).toBe(expected);
  });

  it('keeps at most 2048 bytes by default', () => {
    const long = 'x'.repeat(5000) + '\n';
    expect(tailOfLog(Buffer.from(long)).length).toBe(2048);
  });
});

describe('terminationMessage', () => {
  const base: TerminationMessageInput = {
    policy: 'File',
    exitCode: 0,
    couldNotRun: false,
    file: { kind: 'read', tail: Buffer.alloc(0) },
    hostPath: '/node/pods/p/termination/c/message',
    logTail: () => Buffer.from('log tail\n'),
  };
  const read = (s: string) => ({ kind: 'read' as const, tail: Buffer.from(s) });
  const cases: Array<[string, Partial<TerminationMessageInput>, string | undefined]> = [
    ['File: the file content is the message', { file: read('{"ok":true}') }, '{"ok":true}'],
    ['File: an empty file gives no message', {}, undefined],
    ['File: a failed container with an empty file still gives no message', { exitCode: 1 }, undefined],
    ['File: a missing file gives no message', { file: { kind: 'missing' } }, undefined],
    [
      'FallbackToLogsOnError: a failed container with an empty file gets the log tail',
      { policy: 'FallbackToLogsOnError', exitCode: 2 },
      'log tail\n',
    ],
    [
      'FallbackToLogsOnError: a failed container with a missing file gets the log tail',
      { policy: 'FallbackToLogsOnError', exitCode: 2, file: { kind: 'missing' } },
      'log tail\n',
    ],
    [
      'FallbackToLogsOnError: the file wins over the log when it has content',
      { policy: 'FallbackToLogsOnError', exitCode: 2, file: read('from file') },
      'from file',
    ],
    [
      'FallbackToLogsOnError: a container that exited 0 never gets its log',
      { policy: 'FallbackToLogsOnError', exitCode: 0 },
      undefined,
    ],
    [
      'FallbackToLogsOnError: a container that could not run has no log to fall back to',
      { policy: 'FallbackToLogsOnError', exitCode: 128, couldNotRun: true },
      undefined,
    ],
    [
      'an unreadable file is reported in the message, without the log fallback',
      {
        policy: 'FallbackToLogsOnError',
        exitCode: 1,
        file: { kind: 'error', error: 'EACCES: permission denied' },
      },
      'Error on reading termination log /node/pods/p/termination/c/message: EACCES: permission denied',
    ],
  ];
  it.each(cases)('%s', (_name, over, expected) => {
    expect(terminationMessage({ ...base, ...over })).toBe(expected);
  });

  it('does not read the log when the fallback does not apply', () => {
    const logTail = jest.fn(() => Buffer.from('x'));
    terminationMessage({ ...base, exitCode: 1, logTail });
    terminationMessage({ ...base, policy: 'FallbackToLogsOnError', exitCode: 1, file: read('m'), logTail });
    expect(logTail).not.toHaveBeenCalled();
  });
});

describe('message caps', () => {
  const cases: Array<[string, number, number]> = [
    ['one container may use the whole 12 KiB', 1, 12288],
    ['two containers get 6 KiB each', 2, 6144],
    ['seven containers get the integer part of 12 KiB / 7', 7, 1755],
    ['no containers: the whole budget', 0, 12288],
  ];
  it.each(cases)('%s', (_name, n, expected) => expect(messageBytesPerContainer(n)).toBe(expected));

  it('truncates by UTF-8 bytes and leaves short messages untouched', () => {
    expect(truncateMessage('abcdef', 4)).toBe('abcd');
    expect(truncateMessage('abc', 4)).toBe('abc');
    expect(truncateMessage('aé', 2)).toBe('a\uFFFD');
  });
});
