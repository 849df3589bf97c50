// Table tests for the auth decisions: when a cluster needs the EnableAuth step, when etcd's refusal blocks planning, the step's next action, and when a changed password is applied (RotateAuth).
import { Reasons } from '../crds/conditions';
import {
  authBlocked,
  authNeedsAnotherLook,
  describeRotation,
  nextAuthAction,
  planAuth,
  planAuthRotation,
} from './auth-plan';
import type { Desired, Observed } from './plan';
import { operationFor, plan } from './plan';
import { continuesOperation, summarize } from './operations/registry';
import type { AuthObservation } from '../contracts/auth';

const disabled = (rootUser: boolean, rootRole: boolean, secretProblem?: string): AuthObservation => ({
  ...(secretProblem ? { secretProblem } : {}),
  etcd: { state: 'disabled', rootUser, rootRole },
});
const enabled: AuthObservation = { etcd: { state: 'enabled' } };
const unknown: AuthObservation = { etcd: { state: 'unknown', message: 'no member Pod runs' } };
const rejected: AuthObservation = {
  etcd: { state: 'rejected', message: 'etcd refuses the root credentials' },
};

describe('planAuth', () => {
  test.each<[string, boolean, AuthObservation | undefined, ReturnType<typeof planAuth>]>([
    [
      'a cluster without spec.auth needs nothing, whatever etcd says',
      false,
      disabled(false, false),
      undefined,
    ],
    ['auth that was not observed decides nothing', true, undefined, undefined],
    ['etcd with auth off needs the EnableAuth step', true, disabled(false, false), { kind: 'EnableAuth' }],
    [
      'a root user with its role but auth off still needs it',
      true,
      disabled(true, true),
      { kind: 'EnableAuth' },
    ],
    ['auth already on needs nothing', true, enabled, undefined],
    ['an unanswered question decides nothing', true, unknown, undefined],
    [
      'an unusable Secret is waited for, named in the message',
      true,
      disabled(false, false, 'the Secret ns/root does not exist'),
      {
        kind: 'Wait',
        reason: Reasons.AuthSecretInvalid,
        message: 'auth is not enabled yet: the Secret ns/root does not exist',
      },
    ],
    [
      'a Secret problem once auth is on is not this check’s business',
      true,
      { ...enabled, secretProblem: 'x' },
      undefined,
    ],
  ])('%s', (_name, wanted, observed, expected) => {
    expect(planAuth(wanted, observed)).toEqual(expected);
  });

  // Behind the patch auth-unknown-waits (plan-now.ts): auth that could not be read is not converged.
  test.each<[string, boolean, AuthObservation | undefined, ReturnType<typeof planAuth>]>([
    [
      'an unanswered question is a wait that quotes it',
      true,
      { etcd: { state: 'unknown', message: 'deadline exceeded' } },
      {
        kind: 'Wait',
        reason: Reasons.AuthUnknown,
        message:
          'spec.auth is set and etcd did not say whether auth is on (deadline exceeded); looking again',
      },
    ],
    ['without spec.auth an unanswered question is nobody’s business', false, unknown, undefined],
    ['auth on needs nothing', true, enabled, undefined],
    ['auth off still needs the EnableAuth step', true, disabled(true, true), { kind: 'EnableAuth' }],
    ['auth that was not observed decides nothing', true, undefined, undefined],
  ])('with unknown auth waiting: %s', (_name, wanted, observed, expected) => {
    expect(planAuth(wanted, observed, true)).toEqual(expected);
  });
});

describe('authBlocked', () => {
  test.each<[string, boolean, AuthObservation | undefined, ReturnType<typeof authBlocked>]>([
    [
      'credentials etcd refuses block everything, with etcd’s message',
      true,
      rejected,
      { kind: 'Wait', reason: Reasons.AuthFailed, message: 'etcd refuses the root credentials' },
    ],
    ['a cluster without spec.auth is never blocked', false, rejected, undefined],
    ['auth on and accepted blocks nothing', true, enabled, undefined],
    ['auth off blocks nothing', true, disabled(true, true), undefined],
    ['no observation blocks nothing', true, undefined, undefined],
  ])('%s', (_name, wanted, observed, expected) => {
    expect(authBlocked(wanted, observed)).toEqual(expected);
  });
});

describe('nextAuthAction', () => {
  test.each<[string, AuthObservation, ReturnType<typeof nextAuthAction>]>([
    ['no root user: add it first', disabled(false, false), { kind: 'AddRootUser' }],
    ['root without the root role: grant it', disabled(true, false), { kind: 'GrantRootRole' }],
    ['root with its role: set the password and enable', disabled(true, true), { kind: 'EnableAuth' }],
    ['auth on: done (a retry after enabling finds it so)', enabled, { kind: 'Done' }],
    [
      'an unusable Secret stops before touching etcd',
      disabled(false, false, 'no password'),
      { kind: 'Stop', message: 'no password' },
    ],
    ['etcd not answering stops', unknown, { kind: 'Stop', message: 'no member Pod runs' }],
    ['refused credentials stop', rejected, { kind: 'Stop', message: 'etcd refuses the root credentials' }],
  ])('%s', (_name, observed, expected) => {
    expect(nextAuthAction(observed)).toEqual(expected);
  });
});

describe('planAuthRotation', () => {
  const withApplied = (applied: AuthObservation['applied'], secretProblem?: string): AuthObservation => ({
    ...enabled,
    ...(secretProblem ? { secretProblem } : {}),
    ...(applied ? { applied } : {}),
  });
  test.each<[string, boolean, AuthObservation | undefined, ReturnType<typeof planAuthRotation>]>([
    [
      'a Secret whose password differs from the applied copy is applied',
      true,
      withApplied('stale'),
      { kind: 'RotateAuth' },
    ],
    [
      'a cluster with auth on and no copy yet gets one recorded',
      true,
      withApplied('missing'),
      { kind: 'RotateAuth' },
    ],
    ['a Secret equal to the applied copy needs nothing', true, withApplied('current'), undefined],
    [
      'an observation without the applied field (a history from before it) decides nothing',
      true,
      withApplied(undefined),
      undefined,
    ],
    ['an unusable Secret is not applied', true, withApplied('stale', 'no password'), undefined],
    ['auth that is off is EnableAuth’s business', true, disabled(true, true), undefined],
    ['refused credentials are authBlocked’s business', true, rejected, undefined],
    ['a cluster without spec.auth never rotates', false, withApplied('stale'), undefined],
    ['auth that was not observed decides nothing', true, undefined, undefined],
  ])('%s', (_name, wanted, observed, expected) => {
    expect(planAuthRotation(wanted, observed)).toEqual(expected);
  });

  test.each([
    ['recorded', /already accepts/],
    ['changed', /changed etcd's root password/],
    ['rejected', /accepts neither/],
  ] as const)('the %s result reads as a sentence for the Temporal UI', (result, text) => {
    expect(describeRotation(result)).toMatch(text);
  });
});

describe('the enableAuth check in the plan chain', () => {
  const member = (n: number) => ({
    id: `${100 + n}`,
    name: `main-${n}`,
    isLearner: false,
    started: true,
    reachable: true,
    raftIndex: '50',
  });
  const observed = (members: number, auth?: AuthObservation): Observed => ({
    etcd: { clusterId: '7', leaderId: '100', members: Array.from({ length: members }, (_, n) => member(n)) },
    kube: Array.from({ length: members }, (_, n) => ({
      name: `main-${n}`,
      pod: { phase: 'Running' as const, ready: true, terminating: false },
      claim: { terminating: false, dataLost: false },
    })),
    recorded: { members: [], paused: false },
    ...(auth ? { auth } : {}),
  });
  const desired = (auth: boolean): Desired => ({
    cluster: 'main',
    replicas: 3,
    medium: '',
    versionKnown: true,
    ...(auth ? { auth: true } : {}),
  });

  test('a seed that answers gets auth before any member is added, inside Bootstrap', () => {
    const d = plan(desired(true), observed(1, disabled(false, false)));
    expect(d).toEqual({ check: 'enableAuth', step: { kind: 'EnableAuth' } });
    expect(continuesOperation('Bootstrap', d.step, 3)).toBe(true);
  });

  test('once auth is on, the seed grows as before', () => {
    expect(plan(desired(true), observed(1, enabled)).step).toEqual({ kind: 'AddMember', member: 'main-1' });
  });

  test('a cluster without spec.auth never enables it', () => {
    expect(plan(desired(false), observed(1, disabled(false, false))).step.kind).toBe('AddMember');
  });

  test('an existing cluster that gains spec.auth runs it as its own operation', () => {
    const d = plan(desired(true), observed(3, disabled(true, true)));
    expect(d.step).toEqual({ kind: 'EnableAuth' });
    if (d.step.kind !== 'EnableAuth') throw new Error('unreachable');
    expect(operationFor(d.step, 3)).toBe('EnableAuth');
    expect(continuesOperation('ScaleUp', d.step, 3)).toBe(false);
    expect(summarize('EnableAuth', { namespace: 'ns', name: 'main' }, 3, 3, d.step)).toBe(
      'enable auth on ns/main',
    );
  });

  test('refused credentials hold back every step, even one the chain would take without etcd', () => {
    const o = observed(1, rejected);
    delete o.etcd;
    expect(plan(desired(true), o)).toEqual({
      check: 'authAccepted',
      step: { kind: 'Wait', reason: Reasons.AuthFailed, message: 'etcd refuses the root credentials' },
    });
  });

  test('an unusable Secret waits with the seed alone; it does not grow an open cluster', () => {
    expect(plan(desired(true), observed(1, disabled(false, false, 'no password'))).step).toEqual({
      kind: 'Wait',
      reason: Reasons.AuthSecretInvalid,
      message: 'auth is not enabled yet: no password',
    });
  });

  test('a changed password is applied as its own operation once the cluster is at size', () => {
    const d = plan(desired(true), observed(3, { ...enabled, applied: 'stale' }));
    expect(d).toEqual({ check: 'rotateAuth', step: { kind: 'RotateAuth' } });
    if (d.step.kind !== 'RotateAuth') throw new Error('unreachable');
    expect(operationFor(d.step, 3)).toBe('RotateAuth');
    expect(continuesOperation('ScaleUp', d.step, 3)).toBe(false);
    expect(summarize('RotateAuth', { namespace: 'ns', name: 'main' }, 3, 3, d.step)).toBe(
      'apply the changed root password to ns/main',
    );
  });

  test('a changed password waits while the cluster grows: the operator keeps the applied copy meanwhile', () => {
    expect(plan(desired(true), observed(1, { ...enabled, applied: 'stale' })).step).toEqual({
      kind: 'AddMember',
      member: 'main-1',
    });
  });

  test('auth that could not be read is not converged: the chain waits with AuthUnknown (recorded histories did not)', () => {
    const timedOut: AuthObservation = { etcd: { state: 'unknown', message: 'deadline exceeded' } };
    expect(plan({ ...desired(true), authUnknownWaits: true }, observed(3, timedOut))).toEqual({
      check: 'enableAuth',
      step: {
        kind: 'Wait',
        reason: Reasons.AuthUnknown,
        message:
          'spec.auth is set and etcd did not say whether auth is on (deadline exceeded); looking again',
      },
    });
    // A seed whose auth could not be read does not grow: members must join a cluster that already has auth.
    expect(plan({ ...desired(true), authUnknownWaits: true }, observed(1, timedOut)).step).toMatchObject({
      kind: 'Wait',
      reason: Reasons.AuthUnknown,
    });
    // The rule before the patch, which replayed histories keep: nothing planned.
    expect(plan(desired(true), observed(3, timedOut)).step.kind).toBe('None');
  });

  test('a password that matches the applied copy leaves the cluster converged', () => {
    expect(plan(desired(true), observed(3, { ...enabled, applied: 'current' })).step.kind).toBe('None');
  });
});

describe('authNeedsAnotherLook', () => {
  const timedOut: AuthObservation = { etcd: { state: 'unknown', message: 'deadline exceeded' } };
  test.each([
    ['auth unknown while etcd answered: look again soon', true, true, timedOut, true],
    ['auth unknown because no member answers: the Pods coming back signal', true, false, unknown, false],
    ['auth known to be on', true, true, enabled, false],
    ['auth known to be off', true, true, disabled(true, true), false],
    ['no spec.auth', false, true, timedOut, false],
    ['auth not observed', true, true, undefined, false],
  ] as const)('%s', (_name, wanted, answered, observed, expected) => {
    expect(authNeedsAnotherLook(wanted, answered, observed)).toBe(expected);
  });
});
