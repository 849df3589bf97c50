import { memberClaim, memberPod } from '../activities/member-manifests';
import { ETCD_CLUSTER_DEFAULTS } from '../crds/etcd-cluster';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { FLOOR_LABEL, floorClaim, floorPeerService, floorPod } from './floor-manifests';

const spec = {
  ...ETCD_CLUSTER_DEFAULTS,
  storage: { size: '2Gi', medium: '', storageClassName: 'local-path' },
} as EtcdClusterSpec;
const input = {
  namespace: 'ns',
  cluster: 'f',
  spec,
  image: 'quay.io/coreos/etcd:v3.6.16',
  member: 'f-0',
  initialClusterState: 'new' as const,
  initialCluster: 'f-0=http://f-0.f-peer.ns.svc:2380',
};
const ref = { namespace: 'ns', name: 'f', uid: 'bench-floor' };
const member = memberPod({ ...input, ref, role: 'voter' });
const pod = floorPod(input);
const claim = floorClaim(input);
const svc = floorPeerService('ns', 'f');

describe('floor manifests', () => {
  it.each([
    [
      'the Pod runs the member container as the operator builds it: image, args, probes, mounts',
      () => expect(pod.spec.containers).toEqual(member.spec.containers),
    ],
    [
      'the Pod mounts the same claim, with the same security context and hostname',
      () => {
        expect(pod.spec.volumes).toEqual(member.spec.volumes);
        expect(pod.spec.securityContext).toEqual(member.spec.securityContext);
        expect([pod.spec.hostname, pod.spec.subdomain]).toEqual(['f-0', 'f-peer']);
      },
    ],
    [
      'nothing owns the Pod, so the garbage collector leaves it, and no operator label lets the watcher see it',
      () => expect(pod.metadata).toEqual({ name: 'f-0', namespace: 'ns', labels: { [FLOOR_LABEL]: 'f' } }),
    ],
    [
      'the Pod is spread over nodes like a member, by the floor label',
      () =>
        expect(
          pod.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]
            ?.podAffinityTerm.labelSelector.matchLabels,
        ).toEqual({ [FLOOR_LABEL]: 'f' }),
    ],
    [
      "the claim asks the member claim's class, size and access mode, unowned",
      () => {
        expect(claim.spec).toEqual(memberClaim({ ref, spec, member: 'f-0' }).spec);
        expect(claim.spec.storageClassName).toBe('local-path');
        expect(claim.metadata).toEqual({ name: 'data-f-0', namespace: 'ns', labels: { [FLOOR_LABEL]: 'f' } });
      },
    ],
    [
      'the headless peer Service publishes unready floor Pods under the member DNS names',
      () => {
        expect(svc.metadata.name).toBe('f-peer');
        expect(svc.spec.clusterIP).toBe('None');
        expect(svc.spec.publishNotReadyAddresses).toBe(true);
        expect(svc.spec.selector).toEqual({ [FLOOR_LABEL]: 'f' });
        expect('ownerReferences' in svc.metadata).toBe(false);
      },
    ],
  ])('%s', (_case, check) => {
    check();
  });
});
