import { anyTrue, settleWithin } from './etcd-answers';

const never = () => new Promise<boolean>(() => undefined);
const later = (ms: number, value: boolean) => new Promise<boolean>((r) => setTimeout(() => r(value), ms));
const fails = () => Promise.reject(new Error('removed'));

describe('anyTrue: the first member to say so, not the slowest', () => {
  it.each([
    ['one true beside one that never answers', () => [Promise.resolve(true), never()], true],
    ['a later true after a quick false', () => [Promise.resolve(false), later(20, true)], true],
    ['a failure and a true', () => [fails(), later(10, true)], true],
    ['every check false', () => [Promise.resolve(false), later(10, false)], false],
    ['every check failed or false', () => [fails(), Promise.resolve(false)], false],
    ['no check', () => [], false],
  ] as Array<[string, () => Array<Promise<boolean>>, boolean]>)('%s', async (_what, checks, expected) => {
    await expect(anyTrue(checks())).resolves.toBe(expected);
  });
});

describe('settleWithin: a slow answer counts as the fallback, so a poll is not held by one member', () => {
  it.each([
    ['an answer in time', () => later(5, true), true],
    ['an answer too late', () => later(200, true), false],
    ['no answer at all', never, false],
  ] as Array<[string, () => Promise<boolean>, boolean]>)('%s', async (_what, check, expected) => {
    await expect(settleWithin(check(), 50, false)).resolves.toBe(expected);
  });

  it('lets anyTrue settle false at the bound when every member said false but one never answers', async () => {
    // Without `settleWithin`, anyTrue would wait for the member that never answers, and the test would time out.
    await expect(anyTrue([Promise.resolve(false), settleWithin(never(), 50, false)])).resolves.toBe(false);
  });
});
