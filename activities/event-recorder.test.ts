import { ApiException } from '@kubernetes/client-node';
import { recordOrDrop } from './event-recorder';

const refused = (code: number) => new ApiException(code, 'refused', undefined, {});

describe('recordOrDrop', () => {
  test.each<[string, () => Promise<void>, 'recorded' | 'dropped']>([
    ['an Event the apiserver takes is recorded', async () => undefined, 'recorded'],
    ['a 422 (e.g. a message too long) is dropped', () => Promise.reject(refused(422)), 'dropped'],
    ['a 403 (no RBAC for events) is dropped', () => Promise.reject(refused(403)), 'dropped'],
  ])('%s', async (_name, record, expected) => {
    await expect(recordOrDrop(record)).resolves.toBe(expected);
  });

  test.each<[string, unknown]>([
    ['a 503 is thrown, for Temporal to retry', refused(503)],
    ['a network error is thrown', new Error('connect ECONNREFUSED')],
  ])('%s', async (_name, err) => {
    await expect(recordOrDrop(() => Promise.reject(err))).rejects.toBe(err);
  });
});
