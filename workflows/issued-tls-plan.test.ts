// The stages of a cert-manager CA renewal as a table: trust the new CA first (at once), reissue once every member runs on both, drop the old CA after the kubelet's grace.
import type { IssuedTLSRoleObservation } from '../contracts/issued-tls';
import type { IssuedTLSMemberView } from './issued-tls-plan';
import { OLD_CA_GRACE_MS, planIssuedTLS } from './issued-tls-plan';

const same: Omit<IssuedTLSRoleObservation, 'role'> = {
  issuedReady: true,
  appliedExists: true,
  newCA: false,
  oldCA: false,
  reissued: false,
  reissuedTrusted: false,
};
const roles = (change: Partial<IssuedTLSRoleObservation> = {}): IssuedTLSRoleObservation[] => [
  { role: 'peer', ...same, ...change },
  { role: 'server', ...same, ...change },
  { role: 'operator', ...same },
];
const settled: IssuedTLSMemberView[] = [0, 1, 2].map(() => ({ upToDate: true, ready: true }));
const rolling: IssuedTLSMemberView[] = [
  { upToDate: true, ready: true },
  { upToDate: false, ready: true },
  { upToDate: false, ready: true },
];
const restarting: IssuedTLSMemberView[] = [{ upToDate: true, ready: false }, ...settled.slice(1)];

test.each([
  ['nothing issued differs from the copies: nothing to do', roles(), settled, undefined, undefined],
  ['cert-manager still issuing: nothing yet', roles({ issuedReady: false }), settled, undefined, undefined],
  ['a copy is missing: copy first', roles({ appliedExists: false }), settled, undefined, 'Copy'],
  [
    'cert-manager renewed the CA and reissued everything: trust the new CA first, even before members settle',
    roles({ newCA: true, oldCA: true, reissued: true, reissuedTrusted: true }),
    rolling,
    undefined,
    'TrustNewCA',
  ],
  [
    'members still rolling onto old+new: the reissued certificates wait',
    roles({ oldCA: false, reissued: true, reissuedTrusted: true }),
    rolling,
    undefined,
    undefined,
  ],
  [
    'a restarted member not Ready yet: the reissued certificates wait',
    roles({ reissued: true, reissuedTrusted: true }),
    restarting,
    undefined,
    undefined,
  ],
  [
    'every member trusts old and new: the reissued certificates go into the copies',
    roles({ oldCA: true, reissued: true, reissuedTrusted: true }),
    settled,
    undefined,
    'ApplyReissued',
  ],
  [
    'a reissued certificate no CA in the bundles verifies: never presented',
    roles({ reissued: true, reissuedTrusted: false }),
    settled,
    undefined,
    undefined,
  ],
  [
    'reissued certificates in place for 30 s: the old CA stays (kubelet grace)',
    roles({ oldCA: true }),
    settled,
    30_000,
    `Later ${OLD_CA_GRACE_MS - 30_000}`,
  ],
  [
    'reissued certificates in place past the grace: drop the old CA',
    roles({ oldCA: true }),
    settled,
    OLD_CA_GRACE_MS,
    'DropOldCA',
  ],
  [
    'an old CA and no reissue on record (an operator restarted mid-way): drop it',
    roles({ oldCA: true }),
    settled,
    undefined,
    'DropOldCA',
  ],
  ['the drop waits for members to settle too', roles({ oldCA: true }), rolling, undefined, undefined],
  ['no member Pod at all: nothing but adding trust', roles({ oldCA: true }), [], undefined, undefined],
])('%s', (_name, r, members, ago, expected) => {
  const d = planIssuedTLS({ roles: r, ...(ago !== undefined ? { reissueAppliedAgoMs: ago } : {}) }, members);
  const got = d === undefined ? undefined : d.kind === 'Stage' ? d.stage : `Later ${d.afterMs}`;
  expect(got).toBe(expected);
});
