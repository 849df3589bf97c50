// refusalNotice as a table: which refusal becomes a Warning Event, once per message.
import type { Step } from './plan';
import type { RefusalsTold } from './refusal-notice';
import { refusalNotice } from './refusal-notice';

const none: RefusalsTold = { refusal: '', storage: '' };
const wait = (reason: string, message: string) => ({ kind: 'Wait', reason, message }) as Step;

describe('refusalNotice', () => {
  it.each<[string, Step, RefusalsTold, string | undefined, RefusalsTold]>([
    [
      'a refused upgrade path, first time',
      wait('UpgradePathRefused', 'm1'),
      none,
      'UpgradePathRefused',
      { refusal: 'm1', storage: '' },
    ],
    [
      'the same refusal again',
      wait('UpgradePathRefused', 'm1'),
      { refusal: 'm1', storage: '' },
      undefined,
      { refusal: 'm1', storage: '' },
    ],
    [
      'another message of it',
      wait('UpgradePathRefused', 'm2'),
      { refusal: 'm1', storage: '' },
      'UpgradePathRefused',
      { refusal: 'm2', storage: '' },
    ],
    [
      'an invalid auth Secret',
      wait('AuthSecretInvalid', 's'),
      none,
      'AuthSecretInvalid',
      { refusal: 's', storage: '' },
    ],
    ['failing auth', wait('AuthFailed', 'a'), none, 'AuthFailed', { refusal: 'a', storage: '' }],
    ['broken TLS trust', wait('TLSTrustBroken', 't'), none, 'TLSTrustBroken', { refusal: 't', storage: '' }],
    [
      'shares the memory of other refusals',
      wait('TLSTrustBroken', 'm1'),
      { refusal: 'm1', storage: '' },
      undefined,
      { refusal: 'm1', storage: '' },
    ],
    [
      'a refused storage growth',
      { kind: 'None', reason: 'StorageExpansionRefused', message: 'g' },
      { refusal: 'm1', storage: '' },
      'StorageExpansionRefused',
      { refusal: 'm1', storage: 'g' },
    ],
    [
      'the same storage refusal again',
      { kind: 'None', reason: 'StorageExpansionRefused', message: 'g' },
      { refusal: '', storage: 'g' },
      undefined,
      { refusal: '', storage: 'g' },
    ],
    ['a member starting is no refusal', wait('MemberNotReady', 'x'), none, undefined, none],
    ['a converged cluster', { kind: 'None', reason: 'Converged', message: 'ok' }, none, undefined, none],
    ['a step', { kind: 'AddMember', member: 'main-3' }, none, undefined, none],
  ])('%s', (_what, step, told, reason, after) => {
    const notice = refusalNotice(step, told);
    expect(notice.event?.reason).toBe(reason);
    if (reason)
      expect(notice.event?.message).toBe(step.kind === 'Wait' || step.kind === 'None' ? step.message : '');
    expect(notice.told).toEqual(after);
  });
});
