// Issuing and renewing mode Auto's certificates: the plan as a table, and the activity on an in-memory store (one CA however often it runs or races, renewals only when due, nothing but dates and names in its result).
import { X509Certificate } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { lifetimesOf } from './auto-tls-certificates';
import type { AutoTLSFacts } from './auto-tls';
import { issueAutoTLS, nextRenewal, planAutoTLS } from './auto-tls';
import type { KubeObjects, ObjectRef } from './kube-objects';
import { observeIssuedTLS, stageIssuedTLS } from './issued-tls';
import { chainTrusted, parsePemBundle } from './tls-trust';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const lifetimes = lifetimesOf(undefined);
const now = Date.parse('2026-03-01T00:00:00Z');
const fresh = now + 90 * DAY;
const ok = (role: 'peer' | 'server' | 'operator' | 'client', notAfter = fresh) => ({
  role,
  notAfter,
  ofCurrentCA: true,
});
const all = (notAfter = fresh) => [
  ok('peer', notAfter),
  ok('server', notAfter),
  ok('operator', notAfter),
  ok('client', notAfter),
];
const caFresh = { notAfter: now + 5 * 365 * DAY };

test.each<[string, AutoTLSFacts, ReturnType<typeof planAutoTLS>]>([
  [
    'nothing yet: make the CA and every certificate',
    {
      leaves: [
        { role: 'peer', ofCurrentCA: false },
        { role: 'client', ofCurrentCA: false },
      ],
    },
    { ca: 'create', issue: ['peer', 'client'] },
  ],
  ['everything fresh: nothing to do', { ca: caFresh, leaves: all() }, { ca: 'keep', issue: [] }],
  [
    'a certificate 29 days from expiry (renewBefore 30 days): renew it alone',
    { ca: caFresh, leaves: [ok('peer'), ok('server', now + 29 * DAY)] },
    { ca: 'keep', issue: ['server'] },
  ],
  [
    'a certificate 31 days from expiry: not yet',
    { ca: caFresh, leaves: [ok('server', now + 31 * DAY)] },
    { ca: 'keep', issue: [] },
  ],
  [
    'a certificate of another CA (say, the CA Secret was renewed by a call that stopped half-way): reissue it',
    { ca: caFresh, leaves: [ok('peer'), { role: 'operator', notAfter: fresh, ofCurrentCA: false }] },
    { ca: 'keep', issue: ['operator'] },
  ],
  [
    'a missing certificate Secret: issue it',
    { ca: caFresh, leaves: [ok('peer'), { role: 'client', ofCurrentCA: false }] },
    { ca: 'keep', issue: ['client'] },
  ],
  [
    'the CA 29 days from expiry: renew the CA and then every certificate under it',
    { ca: { notAfter: now + 29 * DAY }, leaves: all(now + 29 * DAY) },
    { ca: 'renew', issue: ['peer', 'server', 'operator', 'client'] },
  ],
])('planAutoTLS: %s', (_case, facts, want) => {
  expect(planAutoTLS(facts, lifetimes, now)).toEqual(want);
});

test('nextRenewal: renewBefore ahead of the first expiry of the CA and the certificates', () => {
  expect(nextRenewal({ ca: caFresh, leaves: [ok('peer'), ok('server', now + 40 * DAY)] }, lifetimes)).toBe(
    now + 10 * DAY,
  );
  expect(nextRenewal({ leaves: [] }, lifetimes)).toBeUndefined();
});

type SecretLike = KubernetesObject & { data?: Record<string, string> };
const ref = { namespace: 'prod', name: 'main', uid: 'u1' };
const spec: Pick<EtcdClusterSpec, 'tls'> = { tls: { mode: 'Auto' } };

function store() {
  const objects = new Map<string, SecretLike>();
  let version = 0;
  const kube: KubeObjects = {
    async createIfAbsent(obj) {
      const name = obj.metadata?.name ?? '';
      if (objects.has(name)) return 'exists';
      const o = structuredClone(obj) as SecretLike;
      o.metadata = { ...o.metadata, resourceVersion: String(++version) };
      objects.set(name, o);
      return 'created';
    },
    async deleteIfPresent() {
      return 'absent';
    },
    async read<T extends KubernetesObject>(r: ObjectRef) {
      const o = objects.get(r.name);
      return o ? (structuredClone(o) as T) : undefined;
    },
    async list() {
      return [];
    },
    async mergePatch(r: ObjectRef, patch: object) {
      const p = patch as { data?: Record<string, string>; metadata?: { resourceVersion?: string } };
      const o = objects.get(r.name);
      if (!o) throw new Error('not found');
      if (p.metadata?.resourceVersion && p.metadata.resourceVersion !== o.metadata?.resourceVersion)
        throw new Error('409 Conflict');
      const annotations = (p.metadata as { annotations?: Record<string, string> } | undefined)?.annotations;
      o.data = { ...o.data, ...p.data };
      o.metadata = {
        ...o.metadata,
        ...(annotations ? { annotations: { ...o.metadata?.annotations, ...annotations } } : {}),
        resourceVersion: String(++version),
      };
    },
  };
  const pem = (name: string, key: string) => Buffer.from(objects.get(name)?.data?.[key] ?? '', 'base64');
  const cert = (name: string, key = 'tls.crt') => new X509Certificate(pem(name, key));
  return { objects, kube, pem, cert };
}

const LEAVES = ['main-peer-tls', 'main-server-tls', 'main-operator-tls', 'main-client-tls-issued'];

test('the first call makes the CA and four certificates it signed, each Secret with tls.crt, tls.key and ca.crt', async () => {
  const s = store();
  const at = new Date(now);
  const result = await issueAutoTLS(s.kube, ref, spec, at);
  expect([...s.objects.keys()].sort()).toEqual(['main-ca', ...LEAVES].sort());
  const ca = s.cert('main-ca');
  expect(ca.ca).toBe(true);
  for (const name of LEAVES) {
    expect(Object.keys(s.objects.get(name)?.data ?? {}).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    expect(chainTrusted([s.cert(name)], [ca])).toBe(true);
    expect(s.cert(name, 'ca.crt').fingerprint256).toBe(ca.fingerprint256);
    expect(s.objects.get(name)?.metadata?.ownerReferences?.[0]?.uid).toBe('u1');
  }
  expect(result).toEqual({
    caNotAfter: '2031-02-28T00:00:00.000Z',
    certificatesNotAfter: '2026-05-30T00:00:00.000Z',
    renewalTime: '2026-04-30T00:00:00.000Z',
    changes: [
      expect.stringMatching(/^created the CA prod\/main-ca/),
      ...['peer', 'server', 'operator', 'client'].map((r) =>
        expect.stringMatching(new RegExp(`^issued the ${r} certificate`)),
      ),
    ],
    caRenewed: false,
  });
  // Names and dates only: no PEM in what goes back to the workflow.
  expect(JSON.stringify(result)).not.toMatch(/BEGIN|PRIVATE/);
});

test('a second call changes nothing, and one after a lost create adopts the CA that is there', async () => {
  const s = store();
  await issueAutoTLS(s.kube, ref, spec, new Date(now));
  const before = structuredClone([...s.objects.entries()]);
  const again = await issueAutoTLS(s.kube, ref, spec, new Date(now + HOUR));
  expect(again?.changes).toEqual([]);
  expect([...s.objects.entries()]).toEqual(before);
  // Two workers racing on an empty namespace: both end with the one CA.
  const t = store();
  await Promise.all([
    issueAutoTLS(t.kube, ref, spec, new Date(now)).catch(() => undefined),
    issueAutoTLS(t.kube, ref, spec, new Date(now)).catch(() => undefined),
  ]);
  await issueAutoTLS(t.kube, ref, spec, new Date(now));
  const ca = t.cert('main-ca');
  for (const name of LEAVES) expect(chainTrusted([t.cert(name)], [ca])).toBe(true);
});

test('a due certificate is renewed by the same CA; the others and the CA stay as they were', async () => {
  const s = store();
  const short: Pick<EtcdClusterSpec, 'tls'> = {
    tls: { mode: 'Auto', auto: { caDuration: '1000h', certificateDuration: '10h', renewBefore: '2h' } },
  };
  await issueAutoTLS(s.kube, ref, short, new Date(now));
  const caBefore = s.pem('main-ca', 'tls.crt');
  const peerBefore = s.pem('main-peer-tls', 'tls.crt');
  expect((await issueAutoTLS(s.kube, ref, short, new Date(now + 7 * HOUR)))?.changes).toEqual([]);
  const renewed = await issueAutoTLS(s.kube, ref, short, new Date(now + 8 * HOUR + 1000));
  expect(renewed?.changes).toHaveLength(4);
  expect(renewed?.changes.every((c) => c.startsWith('renewed the'))).toBe(true);
  expect(s.pem('main-ca', 'tls.crt')).toEqual(caBefore);
  expect(s.pem('main-peer-tls', 'tls.crt')).not.toEqual(peerBefore);
  expect(renewed?.renewalTime).toBe(new Date(now + 8 * HOUR + 1000 + 8 * HOUR).toISOString());
});

test('a due CA is renewed in place and every certificate is reissued under it, with the new CA alone in ca.crt', async () => {
  const s = store();
  const short: Pick<EtcdClusterSpec, 'tls'> = {
    tls: { mode: 'Auto', auto: { caDuration: '20h', certificateDuration: '10h', renewBefore: '2h' } },
  };
  await issueAutoTLS(s.kube, ref, short, new Date(now));
  const oldCA = s.cert('main-ca');
  const result = await issueAutoTLS(s.kube, ref, short, new Date(now + 18 * HOUR + 1000));
  expect(result?.caRenewed).toBe(true);
  const newCA = s.cert('main-ca');
  expect(newCA.fingerprint256).not.toBe(oldCA.fingerprint256);
  expect(newCA.subject).not.toBe(oldCA.subject);
  for (const name of LEAVES) {
    expect(chainTrusted([s.cert(name)], [newCA])).toBe(true);
    expect(chainTrusted([s.cert(name)], [oldCA])).toBe(false);
    expect(s.cert(name, 'ca.crt').fingerprint256).toBe(newCA.fingerprint256);
  }
  expect(result?.changes[0]).toMatch(/^renewed the CA prod\/main-ca/);
});

test("only: 'missing' (before a member Pod is created) makes what is absent and renews nothing", async () => {
  const s = store();
  const short: Pick<EtcdClusterSpec, 'tls'> = {
    tls: { mode: 'Auto', auto: { caDuration: '20h', certificateDuration: '10h', renewBefore: '2h' } },
  };
  await issueAutoTLS(s.kube, ref, short, new Date(now), 'missing');
  expect(s.objects.size).toBe(5);
  s.objects.delete('main-client-tls-issued');
  const later = await issueAutoTLS(s.kube, ref, short, new Date(now + 19 * HOUR), 'missing');
  expect(later?.changes).toEqual([expect.stringMatching(/^issued the client certificate/)]);
  expect(later?.caRenewed).toBe(false);
});

test('without mode Auto it does nothing', async () => {
  const s = store();
  expect(await issueAutoTLS(s.kube, ref, {}, new Date(now))).toBeUndefined();
  expect(s.objects.size).toBe(0);
});

test('what it issues goes through the staged copies: copied, a renewal applied to all four, a CA renewal trusted next to the old CA first (clients too)', async () => {
  const s = store();
  const short: Pick<EtcdClusterSpec, 'tls'> = {
    tls: { mode: 'Auto', auto: { caDuration: '20h', certificateDuration: '10h', renewBefore: '2h' } },
  };
  const roles = async () => (await observeIssuedTLS(s.kube, ref, short, now))?.roles ?? [];
  await issueAutoTLS(s.kube, ref, short, new Date(now));
  expect((await roles()).map((r) => [r.role, r.issuedReady, r.appliedExists])).toEqual([
    ['peer', true, false],
    ['server', true, false],
    ['operator', true, false],
    ['client', true, false],
  ]);
  expect((await stageIssuedTLS(s.kube, ref, short, 'Copy')).sort()).toEqual(
    [
      'main-client-tls',
      'main-operator-tls-applied',
      'main-peer-tls-applied',
      'main-server-tls-applied',
    ].sort(),
  );
  // The handed-out Secret is the clients' copy: certificate, key and the CA.
  expect(chainTrusted([s.cert('main-client-tls')], [s.cert('main-ca')])).toBe(true);

  // A renewal from the same CA: reissued and trusted as it stands, applied to all four copies at once.
  await issueAutoTLS(s.kube, ref, short, new Date(now + 8 * HOUR + 1000));
  expect((await roles()).every((r) => r.reissued && r.reissuedTrusted && !r.newCA)).toBe(true);
  expect(await stageIssuedTLS(s.kube, ref, short, 'ApplyReissued')).toHaveLength(4);
  expect((await roles()).some((r) => r.reissued)).toBe(false);

  // A CA renewal: every copy first trusts old and new, the clients' included; the new certificates wait.
  const oldCA = s.cert('main-ca');
  await issueAutoTLS(s.kube, ref, short, new Date(now + 18 * HOUR + 1000));
  expect((await roles()).every((r) => r.newCA && r.reissued && !r.reissuedTrusted)).toBe(true);
  expect(await stageIssuedTLS(s.kube, ref, short, 'ApplyReissued')).toEqual([]);
  expect(await stageIssuedTLS(s.kube, ref, short, 'TrustNewCA')).toHaveLength(4);
  const clientTrust = parsePemBundle(s.pem('main-client-tls', 'ca.crt')).map((c) => c.fingerprint256);
  expect(clientTrust).toEqual([oldCA.fingerprint256, s.cert('main-ca').fingerprint256]);
  expect(chainTrusted([s.cert('main-client-tls')], [oldCA])).toBe(true);
  expect((await roles()).every((r) => r.reissuedTrusted)).toBe(true);
});
