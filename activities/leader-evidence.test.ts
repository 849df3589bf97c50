import type { LeaderAnswer, PodReadiness } from './leader-evidence';
import {
  confirmWorthAsking,
  LIST_PATIENCE_MS,
  NoLeaderKnown,
  noLeaderKnown,
  provesNoLeader,
  QuorumGone,
  quorumGoneMeanwhile,
} from './leader-evidence';

const none: LeaderAnswer = { leaderId: '0' };
const leader: LeaderAnswer = { leaderId: '7' };

describe('provesNoLeader', () => {
  test.each<[string, LeaderAnswer[], boolean]>([
    ['one member answered, knowing no leader; the others did not answer', [none, undefined, undefined], true],
    ['every member answered, none knowing a leader', [none, none, none], true],
    ['an empty leader id counts as none', [{ leaderId: '' }], true],
    ['one member knows a leader', [none, leader, undefined], false],
    ['no member answered (killed, frozen, refusing TLS): nothing is proven', [undefined, undefined], false],
    ['no member asked', [], false],
  ])('%s', (_what, answers, proven) => {
    expect(provesNoLeader(answers)).toBe(proven);
  });
});

describe('confirmWorthAsking', () => {
  const voter = (ready: boolean): PodReadiness => ({ ready, role: 'voter' });
  const learner: PodReadiness = { ready: false, role: 'learner' };
  const unlabelled = (ready: boolean): PodReadiness => ({ ready, role: undefined });
  test.each<[string, PodReadiness[], boolean, boolean]>([
    ['no Pod Ready (a bootstrap, members killed): never', [voter(false), voter(false)], false, false],
    ['no Pod Ready, the round cut short: never', [voter(false), voter(false)], true, false],
    [
      'a round that ran out, one Pod of three Ready: asked again',
      [voter(true), voter(false), voter(false)],
      false,
      true,
    ],
    [
      'cut short, one voter Pod of three Ready: quorum is gone',
      [voter(true), voter(false), voter(false)],
      true,
      false,
    ],
    [
      'cut short, two voter Pods of three Ready (a leader restarting)',
      [voter(true), voter(true), voter(false)],
      true,
      true,
    ],
    [
      'cut short, two of four Ready: not a majority',
      [voter(true), voter(true), voter(false), voter(false)],
      true,
      false,
    ],
    [
      'cut short, learners not counted: three voters, two Ready',
      [voter(true), voter(true), voter(false), learner, learner],
      true,
      true,
    ],
    [
      'cut short, no Pod labelled a voter yet: every Pod counts',
      [unlabelled(true), unlabelled(true), unlabelled(false)],
      true,
      true,
    ],
    [
      'cut short, no Pod labelled a voter yet, one of three Ready',
      [unlabelled(true), unlabelled(false), unlabelled(false)],
      true,
      false,
    ],
  ])('%s', (_what, pods, cutShort, asked) => {
    expect(confirmWorthAsking(pods, cutShort)).toBe(asked);
  });
});

describe('noLeaderKnown', () => {
  const patience = jest.fn(async (_ms: number) => undefined);
  /** Whether `p` settled within a few turns of the event loop (it never settles when nothing is proven). */
  const settles = async (p: Promise<never>) => {
    let settled: unknown = 'pending';
    p.catch((err: unknown) => (settled = err));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    return settled;
  };

  it('rejects with NoLeaderKnown once every member settled and none knows a leader, after its patience', async () => {
    const asked: number[] = [];
    const err = await settles(
      noLeaderKnown(
        3,
        async (i) => {
          asked.push(i);
          if (i === 0) return none;
          throw new Error('context deadline exceeded');
        },
        () => false,
        patience,
      ),
    );
    expect(err).toBeInstanceOf(NoLeaderKnown);
    expect((err as Error).message).toBe('no member knows a leader (1 answered their status)');
    expect(asked).toEqual([0, 1, 2]);
    expect(patience).toHaveBeenCalledWith(LIST_PATIENCE_MS);
  });

  it('never settles when a member knows a leader: the list decides', async () => {
    const err = await settles(
      noLeaderKnown(
        2,
        async (i) => (i === 0 ? none : leader),
        () => false,
        patience,
      ),
    );
    expect(err).toBe('pending');
  });

  it('asks nothing once the list was answered within its patience', async () => {
    const ask = jest.fn(async () => none);
    expect(await settles(noLeaderKnown(3, ask, () => true, patience))).toBe('pending');
    expect(ask).not.toHaveBeenCalled();
  });

  it('never settles when the list was answered while members were asked', async () => {
    let answered = false;
    const ask = async () => {
      answered = true;
      return none;
    };
    expect(await settles(noLeaderKnown(1, ask, () => answered, patience))).toBe('pending');
  });
});

describe('quorumGoneMeanwhile', () => {
  const voter = (ready: boolean): PodReadiness => ({ ready, role: 'voter' });
  // Each poll's readiness is read after a pause; the watch never settles on its own, so `done` ends it as pending.
  const pending = (p: Promise<never>) =>
    Promise.race([
      p.then(
        () => 'settled',
        (err: unknown) => err,
      ),
      new Promise((r) => setImmediate(() => r('pending'))),
    ]);

  it('rejects once most voter Pods are not Ready and no member that answers knows a leader', async () => {
    // The first reading finds two of three Ready; the second finds one.
    const readings = [
      [voter(true), voter(true), voter(false)],
      [voter(true), voter(false), voter(false)],
    ];
    let polls = 0;
    const leaders = jest.fn(async (): Promise<LeaderAnswer[]> => [{ leaderId: '0' }, undefined, undefined]);
    const outcome = await pending(
      quorumGoneMeanwhile({
        readiness: async () => readings[polls - 1] ?? [],
        leaders,
        done: () => polls >= 5,
        pause: async () => {
          polls++;
        },
        pollMs: 200,
      }),
    );
    expect(outcome).toBeInstanceOf(QuorumGone);
    expect(polls).toBe(2);
    expect(leaders).toHaveBeenCalledTimes(1);
  });

  it('asks members nothing while most voter Pods are Ready, and stops once done', async () => {
    let polls = 0;
    const leaders = jest.fn(async () => [{ leaderId: '0' }]);
    const outcome = await pending(
      quorumGoneMeanwhile({
        readiness: async () => [voter(true), voter(true), voter(false)],
        leaders,
        done: () => polls >= 3,
        pause: async () => {
          polls++;
        },
        pollMs: 200,
      }),
    );
    expect(outcome).toBe('pending');
    expect(polls).toBe(3);
    expect(leaders).not.toHaveBeenCalled();
  });

  it('keeps watching while a member knows a leader, though most voter Pods are not Ready', async () => {
    let polls = 0;
    const outcome = await pending(
      quorumGoneMeanwhile({
        readiness: async () => [voter(true), voter(false), voter(false)],
        leaders: async () => [{ leaderId: '0' }, { leaderId: '2' }],
        done: () => polls >= 3,
        pause: async () => {
          polls++;
        },
        pollMs: 200,
      }),
    );
    expect(outcome).toBe('pending');
    expect(polls).toBe(3);
  });
});
