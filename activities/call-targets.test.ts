// The one rule for where a cluster-wide etcd call goes, as a table.
import type { CallCandidate } from './call-targets';
import { callTargets } from './call-targets';

const pod = (name: string, role?: string, going = false): CallCandidate => ({ name, role, going });

test.each<[string, CallCandidate[], string[]]>([
  ['no Pod: nobody to ask', [], []],
  ['voters only, learners left out', [pod('a', 'voter'), pod('b', 'learner'), pod('c', 'voter')], ['a', 'c']],
  [
    'no voter labelled yet (the first member starting): any member Pod',
    [pod('a'), pod('b', 'learner')],
    ['a', 'b'],
  ],
  ['a voter being deleted is not asked', [pod('a', 'voter', true), pod('b', 'voter')], ['b']],
  ['only going voters: the live Pods that remain', [pod('a', 'voter', true), pod('b', 'learner')], ['b']],
  ['every Pod going: nobody to ask', [pod('a', 'voter', true), pod('b', undefined, true)], []],
  ['a Pod without a name is never a target', [pod('', 'voter'), pod('b', 'voter')], ['b']],
  ['the order given is kept', [pod('c', 'voter'), pod('a', 'voter'), pod('b', 'voter')], ['c', 'a', 'b']],
])('%s', (_why, pods, expected) => {
  expect(callTargets(pods)).toEqual(expected);
});
