import type { KubernetesObject } from '@kubernetes/client-node';
import { makeCA, tlsSecret } from '../test/tls/tls-certs';
import type { Pem, TestCA } from '../test/tls/tls-certs';
import type { KubeObjects, ObjectRef } from './kube-objects';
import { chainTrusted, judgeTLSTrust, parsePemBundle, readTLSTrust } from './tls-trust';
import type { TrustPair } from './tls-trust';

// Real certificates (openssl), so the verdicts are about signatures, not about strings.
let oldCA: TestCA;
let newCA: TestCA;
let oldLeaf: Pem;
let newLeaf: Pem;

beforeAll(() => {
  oldCA = makeCA('old-ca');
  newCA = makeCA('new-ca');
  oldLeaf = oldCA.issue('main-peer', ['DNS:*.main-peer.prod.svc']);
  newLeaf = newCA.issue('main-peer', ['DNS:*.main-peer.prod.svc']);
});

const pair = (chain: Buffer, trust: Buffer): TrustPair => ({
  certificate: 'the peer certificate (tls.crt of Secret prod/main-peer)',
  chain,
  bundle: 'the peer ca.crt of Secret prod/main-peer',
  trust,
});

describe('judgeTLSTrust', () => {
  const cases: [string, () => TrustPair[], boolean][] = [
    ['a leaf of the only CA in the bundle is trusted', () => [pair(oldLeaf.cert, oldCA.cert)], true],
    [
      'stage 1: an old leaf under the old+new bundle is trusted',
      () => [pair(oldLeaf.cert, Buffer.concat([oldCA.cert, newCA.cert]))],
      true,
    ],
    [
      'stage 2: a reissued leaf under the old+new bundle is trusted',
      () => [pair(newLeaf.cert, Buffer.concat([oldCA.cert, newCA.cert]))],
      true,
    ],
    [
      'stage 3: a reissued leaf under the new CA alone is trusted',
      () => [pair(newLeaf.cert, newCA.cert)],
      true,
    ],
    [
      'dropping the old CA before reissuing is refused: the new bundle does not trust the old leaf',
      () => [pair(oldLeaf.cert, newCA.cert)],
      false,
    ],
    [
      'a leaf its own ca.crt does not sign is refused (the Secret was never consistent)',
      () => [pair(newLeaf.cert, oldCA.cert)],
      false,
    ],
    ['an empty bundle is refused', () => [pair(oldLeaf.cert, Buffer.from(''))], false],
    ['an empty tls.crt is refused', () => [pair(Buffer.from('junk'), oldCA.cert)], false],
    [
      'one untrusted pair among trusted ones is refused',
      () => [pair(oldLeaf.cert, oldCA.cert), pair(newLeaf.cert, oldCA.cert)],
      false,
    ],
    ['no pairs (nothing to check) is trusted', () => [], true],
  ];
  test.each(cases)('%s', (_name, pairs, trusted) => {
    expect(judgeTLSTrust(pairs()).trusted).toBe(trusted);
  });

  test('the refusal names the certificate, its issuer, the bundle and what to do', () => {
    const verdict = judgeTLSTrust([pair(oldLeaf.cert, newCA.cert)]);
    expect(verdict.trusted).toBe(false);
    const message = verdict.trusted ? '' : verdict.message;
    expect(message).toContain('the peer ca.crt of Secret prod/main-peer (new-ca)');
    expect(message).toContain('does not trust the peer certificate (tls.crt of Secret prod/main-peer)');
    expect(message).toContain('issued by old-ca');
    expect(message).toContain('put the new CA next to the old one');
    // Words, not material: no PEM in the message.
    expect(message).not.toContain('BEGIN');
  });
});

describe('chainTrusted', () => {
  test('follows an intermediate carried in tls.crt up to a root of the bundle', () => {
    // The intermediate is issued by the root with CA basic constraints; the leaf by the intermediate.
    const root = makeCA('root-ca');
    const intermediate = root.issueCA('intermediate-ca');
    const leaf = intermediate.issue('member');
    const chain = parsePemBundle(Buffer.concat([leaf.cert, intermediate.cert]));
    expect(chainTrusted(chain, parsePemBundle(root.cert))).toBe(true);
    // Without the intermediate the root cannot be reached.
    expect(chainTrusted(parsePemBundle(leaf.cert), parsePemBundle(root.cert))).toBe(false);
    expect(chainTrusted(chain, parsePemBundle(oldCA.cert))).toBe(false);
  });
});

describe('readTLSTrust', () => {
  const ref = { namespace: 'prod', name: 'main' };
  const spec = {
    tls: {
      peer: { secretName: 'peer' },
      client: { secretName: 'server', operatorSecretName: 'operator' },
    },
  };
  function kubeWith(secrets: ReturnType<typeof tlsSecret>[]): KubeObjects {
    const store = new Map(secrets.map((s) => [s.metadata.name, s]));
    return {
      createIfAbsent: async () => 'exists',
      deleteIfPresent: async () => 'absent',
      read: async <T extends KubernetesObject>(r: ObjectRef) => store.get(r.name) as T | undefined,
      list: async () => [],
      mergePatch: async () => undefined,
    };
  }

  test('nothing to judge without spec.tls', async () => {
    expect(await readTLSTrust(kubeWith([]), ref, {})).toBeUndefined();
  });

  test('trusted when each ca.crt verifies the certificates members depend on', async () => {
    const kube = kubeWith([
      tlsSecret('peer', oldLeaf, oldCA.cert),
      tlsSecret('server', oldLeaf, oldCA.cert),
      tlsSecret('operator', oldCA.issue('etcd-conductor'), oldCA.cert),
    ]);
    expect(await readTLSTrust(kube, ref, spec)).toEqual({ trusted: true });
  });

  test("the client ca.crt must trust the operator's client certificate, or a restarted member would refuse the operator", async () => {
    const kube = kubeWith([
      tlsSecret('peer', newLeaf, newCA.cert),
      tlsSecret('server', newLeaf, newCA.cert),
      tlsSecret('operator', oldCA.issue('etcd-conductor'), Buffer.concat([oldCA.cert, newCA.cert])),
    ]);
    const verdict = await readTLSTrust(kube, ref, spec);
    expect(verdict?.trusted).toBe(false);
    expect(verdict && !verdict.trusted ? verdict.message : '').toMatch(
      /the client ca.crt of Secret prod\/server \(new-ca\) does not trust the operator's client certificate \(tls.crt of Secret prod\/operator\)/,
    );
  });
});
