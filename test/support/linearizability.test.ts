// The checker itself, run as the soak runs it (the lincheck binary from the tool cache, built by `tools` or `up`):
// it must pass histories etcd may produce and fail the ones it must not, or the soak's verdict means nothing.
import type { LinCall } from './linearizability';
import { checkLinearizable } from './linearizability';

const put = (client: number, key: string, value: string, call: number, ret?: number): LinCall =>
  ret === undefined
    ? { client, kind: 'put', key, value, call, unknown: true }
    : { client, kind: 'put', key, value, call, return: ret };
const get = (client: number, key: string, got: string | undefined, call: number, ret: number): LinCall => ({
  client,
  kind: 'get',
  key,
  call,
  return: ret,
  found: got !== undefined,
  ...(got !== undefined ? { got } : {}),
});
const cas = (
  client: number,
  key: string,
  expected: string,
  value: string,
  succeeded: boolean,
  call: number,
  ret: number,
): LinCall => ({ client, kind: 'cas', key, expected, value, call, return: ret, succeeded });

describe('checkLinearizable (porcupine against etcd key-value model)', () => {
  it.each<[string, LinCall[], 'Ok' | 'Illegal']>([
    ['a read after a write sees it', [put(0, 'a', '1', 0, 10), get(1, 'a', '1', 20, 30)], 'Ok'],
    ['a read of a key never written finds nothing', [get(0, 'a', undefined, 0, 10)], 'Ok'],
    [
      'a stale read: a write finished, a later read still sees the old value',
      [put(0, 'a', '1', 0, 10), put(0, 'a', '2', 20, 30), get(1, 'a', '1', 40, 50)],
      'Illegal',
    ],
    [
      'a read concurrent with a write may see either value',
      [put(0, 'a', '1', 0, 10), put(0, 'a', '2', 20, 60), get(1, 'a', '1', 30, 40), get(2, 'a', '2', 45, 50)],
      'Ok',
    ],
    [
      'values going back in time: once a reader saw the new value, a later read cannot see the old one',
      [
        put(0, 'a', '1', 0, 10),
        put(0, 'a', '2', 20, 100),
        get(1, 'a', '2', 30, 40),
        get(2, 'a', '1', 50, 60),
      ],
      'Illegal',
    ],
    ['a read of a value nobody wrote', [put(0, 'a', '1', 0, 10), get(1, 'a', '9', 20, 30)], 'Illegal'],
    [
      'a write of unknown outcome may have taken effect',
      [put(0, 'a', '1', 0, 10), put(1, 'a', '2', 20), get(2, 'a', '2', 100, 110)],
      'Ok',
    ],
    [
      'a write of unknown outcome may also never have taken effect',
      [put(0, 'a', '1', 0, 10), put(1, 'a', '2', 20), get(2, 'a', '1', 100, 110)],
      'Ok',
    ],
    [
      'a compare-and-swap that held and one that did not',
      [
        put(0, 'a', '1', 0, 10),
        cas(1, 'a', '1', '2', true, 20, 30),
        cas(2, 'a', '1', '3', false, 40, 50),
        get(0, 'a', '2', 60, 70),
      ],
      'Ok',
    ],
    [
      'two compare-and-swaps from the same value cannot both succeed',
      [put(0, 'a', '1', 0, 10), cas(1, 'a', '1', '2', true, 20, 30), cas(2, 'a', '1', '3', true, 40, 50)],
      'Illegal',
    ],
    [
      'a lost acknowledged write: read back as the value before it',
      [put(0, 'a', '1', 0, 10), put(0, 'a', '2', 20, 30), cas(1, 'a', '1', '3', true, 40, 50)],
      'Illegal',
    ],
    [
      'keys are independent: a stale read on one key is found among others',
      [
        put(0, 'b', 'x', 0, 5),
        put(0, 'a', '1', 0, 10),
        put(1, 'a', '2', 20, 30),
        get(2, 'b', 'x', 35, 36),
        get(2, 'a', '1', 40, 50),
      ],
      'Illegal',
    ],
  ])('%s: %s', async (_, history, result) => {
    expect((await checkLinearizable(history, { timeoutSeconds: 30 })).result).toBe(result);
  });

  it('refuses a history it cannot read, with the reason', async () => {
    const bad = [{ client: 0, kind: 'delete', key: 'a', call: 0, return: 1 }] as unknown as LinCall[];
    const v = await checkLinearizable(bad);
    expect(v.result).toBe('BadInput');
    expect(v.error).toContain('unknown kind');
  });

  it('counts the calls and the ones of unknown outcome', async () => {
    const v = await checkLinearizable([put(0, 'a', '1', 0, 10), put(1, 'b', '2', 20)]);
    expect(v).toMatchObject({ result: 'Ok', operations: 2, unknown: 1, keys: 2 });
  });
});
