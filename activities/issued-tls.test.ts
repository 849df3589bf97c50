// A cert-manager CA renewal walked through the operator's copies with real certificates: each stage changes only what it must, repeats change nothing, and the observation carries no certificate or key.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { makeCA } from '../test/tls/tls-certs';
import type { Pem, TestCA } from '../test/tls/tls-certs';
import {
  ensureAppliedCopies,
  observeIssuedTLS,
  REISSUE_APPLIED_AT_ANNOTATION,
  stageIssuedTLS,
  unionBundle,
} from './issued-tls';
import type { KubeObjects, ObjectRef } from './kube-objects';

type SecretLike = KubernetesObject & { data?: Record<string, string> };
const ref = { namespace: 'prod', name: 'main', uid: 'u1' };
const issuerRef = { name: 'ca', kind: 'Issuer' as const, group: 'cert-manager.io' };
const spec: Pick<EtcdClusterSpec, 'tls'> = { tls: { peer: { issuerRef }, client: { issuerRef } } };
const ISSUED = ['main-peer-tls', 'main-server-tls', 'main-operator-tls'];

function store() {
  const objects = new Map<string, SecretLike>();
  const patches: string[] = [];
  const kube: KubeObjects = {
    async createIfAbsent(obj) {
      const name = obj.metadata?.name ?? '';
      if (objects.has(name)) return 'exists';
      objects.set(name, structuredClone(obj) as SecretLike);
      return 'created';
    },
    async deleteIfPresent() {
      return 'absent';
    },
    async read<T extends KubernetesObject>(r: ObjectRef) {
      return objects.get(r.name) as T | undefined;
    },
    async list() {
      return [];
    },
    async mergePatch(r: ObjectRef, patch: object) {
      const p = patch as {
        data?: Record<string, string>;
        metadata?: { annotations?: Record<string, string> };
      };
      const o = objects.get(r.name);
      if (!o) throw new Error('not found');
      patches.push(r.name);
      o.data = { ...o.data, ...p.data };
      if (p.metadata?.annotations)
        o.metadata = {
          ...o.metadata,
          annotations: { ...o.metadata?.annotations, ...p.metadata.annotations },
        };
    },
  };
  /** What cert-manager writes when it issues: a leaf from `ca` and ca.crt = that CA alone. */
  const issue = (ca: TestCA, leaves: Record<string, Pem>) => {
    for (const name of ISSUED) {
      const leaf = leaves[name] ?? ca.issue(name);
      objects.set(name, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: ref.namespace },
        data: {
          'tls.crt': leaf.cert.toString('base64'),
          'tls.key': leaf.key.toString('base64'),
          'ca.crt': ca.cert.toString('base64'),
        },
      });
    }
  };
  const data = (name: string, key: string) => Buffer.from(objects.get(name)?.data?.[key] ?? '', 'base64');
  return { kube, issue, data, patches, objects };
}

let oldCA: TestCA;
let newCA: TestCA;
beforeAll(() => {
  oldCA = makeCA('old-ca');
  newCA = makeCA('new-ca');
});

test('a renewal goes through the stages: trust both, reissue, drop the old CA; each stage twice changes nothing the second time', async () => {
  const s = store();
  s.issue(oldCA, {});
  await ensureAppliedCopies(s.kube, ref, spec);
  expect(s.data('main-peer-tls-applied', 'tls.crt')).toEqual(s.data('main-peer-tls', 'tls.crt'));
  const oldLeaf = s.data('main-peer-tls', 'tls.crt');
  let seen = await observeIssuedTLS(s.kube, ref, spec);
  expect(seen?.roles.every((r) => r.appliedExists && !r.newCA && !r.oldCA && !r.reissued)).toBe(true);

  // cmctl renew: a new CA, and every Secret reissued from it.
  s.issue(newCA, {});
  seen = await observeIssuedTLS(s.kube, ref, spec);
  expect(seen?.roles.map((r) => [r.role, r.newCA, r.oldCA, r.reissued, r.reissuedTrusted])).toEqual([
    ['peer', true, true, true, false],
    ['server', true, true, true, false],
    ['operator', true, true, true, false],
  ]);
  // No certificate or key crosses into Temporal.
  expect(JSON.stringify(seen)).not.toMatch(/BEGIN|PRIVATE/);

  expect(await stageIssuedTLS(s.kube, ref, spec, 'TrustNewCA')).toHaveLength(3);
  expect(s.data('main-peer-tls-applied', 'ca.crt')).toEqual(unionBundle(oldCA.cert, newCA.cert));
  expect(s.data('main-peer-tls-applied', 'tls.crt')).toEqual(oldLeaf);
  expect(await stageIssuedTLS(s.kube, ref, spec, 'TrustNewCA')).toEqual([]);
  // Members restarted on old+new trust the reissued certificates.
  seen = await observeIssuedTLS(s.kube, ref, spec);
  expect(seen?.roles.every((r) => r.reissued && r.reissuedTrusted && r.oldCA && !r.newCA)).toBe(true);

  expect(
    await stageIssuedTLS(s.kube, ref, spec, 'ApplyReissued', new Date('2026-01-01T00:00:00Z')),
  ).toHaveLength(3);
  expect(s.data('main-peer-tls-applied', 'tls.crt')).toEqual(s.data('main-peer-tls', 'tls.crt'));
  expect(s.objects.get('main-peer-tls-applied')?.metadata?.annotations?.[REISSUE_APPLIED_AT_ANNOTATION]).toBe(
    '2026-01-01T00:00:00.000Z',
  );
  expect(await stageIssuedTLS(s.kube, ref, spec, 'ApplyReissued')).toEqual([]);
  seen = await observeIssuedTLS(s.kube, ref, spec, Date.parse('2026-01-01T00:00:30Z'));
  expect(seen?.reissueAppliedAgoMs).toBe(30_000);
  expect(seen?.roles.every((r) => r.oldCA && !r.newCA && !r.reissued)).toBe(true);

  expect(await stageIssuedTLS(s.kube, ref, spec, 'DropOldCA')).toHaveLength(3);
  expect(s.data('main-server-tls-applied', 'ca.crt')).toEqual(newCA.cert);
  expect(await stageIssuedTLS(s.kube, ref, spec, 'DropOldCA')).toEqual([]);
  seen = await observeIssuedTLS(s.kube, ref, spec);
  expect(seen?.roles.every((r) => !r.oldCA && !r.newCA && !r.reissued)).toBe(true);
});

test('stages asked out of order change nothing: no reissue before the new CA is trusted, no drop before the reissue', async () => {
  const s = store();
  s.issue(oldCA, {});
  await ensureAppliedCopies(s.kube, ref, spec);
  s.issue(newCA, {});
  // The copies trust only the old CA: a new-CA certificate would be refused by every member.
  expect((await observeIssuedTLS(s.kube, ref, spec))?.roles.some((r) => r.reissuedTrusted)).toBe(false);
  expect(await stageIssuedTLS(s.kube, ref, spec, 'ApplyReissued')).toEqual([]);
  await stageIssuedTLS(s.kube, ref, spec, 'TrustNewCA');
  // The old leaves are still presented: dropping the old CA would cut them off.
  expect(await stageIssuedTLS(s.kube, ref, spec, 'DropOldCA')).toEqual([]);
  expect(s.patches).toHaveLength(3);
});

test('an ordinary leaf renewal (same CA) is a reissue alone', async () => {
  const s = store();
  s.issue(oldCA, {});
  await ensureAppliedCopies(s.kube, ref, spec);
  s.issue(oldCA, {});
  const seen = await observeIssuedTLS(s.kube, ref, spec);
  expect(seen?.roles.map((r) => [r.newCA, r.oldCA, r.reissued, r.reissuedTrusted])).toEqual([
    [false, false, true, true],
    [false, false, true, true],
    [false, false, true, true],
  ]);
});

test('without an issuerRef there is nothing to observe or copy', async () => {
  const s = store();
  const own = { tls: { peer: { secretName: 'p' } } };
  expect(await observeIssuedTLS(s.kube, ref, own)).toBeUndefined();
  await ensureAppliedCopies(s.kube, ref, own);
  expect(s.objects.size).toBe(0);
});

test('a copy waits for cert-manager to issue, saying which Secret it waits for', async () => {
  const s = store();
  await expect(ensureAppliedCopies(s.kube, ref, spec)).rejects.toThrow(
    /prod\/main-peer-tls .* does not exist yet/,
  );
});
