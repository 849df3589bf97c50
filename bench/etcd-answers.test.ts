import { anyTrue } from './etcd-answers';

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
