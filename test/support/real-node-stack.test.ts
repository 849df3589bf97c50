// When a real-node test file shares the default stack rather than bringing up its own.
import type { StackInfo } from '../../localcluster/stack-info';
import { shareableDefaultStack } from './real-node-stack';

// Partial of any values: a stack.json from before the process runtime was removed may hold other nodeRuntime values.
const stack = (over: Partial<Record<keyof StackInfo, unknown>>): StackInfo =>
  ({
    version: 1,
    phase: 'ready',
    ownerPid: 42,
    nodeRuntime: 'real',
    stateDir: '/s',
    hostIp: '127.20.0.1',
    ...over,
  }) as StackInfo;

describe('shareableDefaultStack', () => {
  const cases: Array<[string, NodeJS.ProcessEnv, StackInfo | undefined, boolean, boolean]> = [
    ['a ready real-node stack is shared', {}, stack({}), true, true],
    ['no stack at all: a stack of its own', {}, undefined, true, false],
    [
      'a process-node stack (since removed): a stack of its own',
      {},
      stack({ nodeRuntime: 'process' }),
      true,
      false,
    ],
    [
      'a stack.json older than real nodes, without nodeRuntime: a stack of its own',
      {},
      stack({ nodeRuntime: undefined }),
      true,
      false,
    ],
    ['a stack still starting is not shared', {}, stack({ phase: 'starting' }), true, false],
    ['a stack whose owner died is not shared', {}, stack({}), false, false],
    [
      'REAL_NODES_OWN_STACK=1 asks for a stack of its own',
      { REAL_NODES_OWN_STACK: '1' },
      stack({}),
      true,
      false,
    ],
  ];
  test.each(cases)('%s', (_what, env, info, alive, shared) => {
    const read = jest.fn(() => info);
    const got = shareableDefaultStack(
      { ETCD_CONDUCTOR_STACK_JSON: '/x/stack.json', ...env },
      read,
      () => alive,
    );
    expect(got !== undefined).toBe(shared);
    if (shared) expect(read).toHaveBeenCalledWith('/x/stack.json');
  });
});
