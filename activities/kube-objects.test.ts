import type { KubernetesObject } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../crds/conditions';
import { refuseForeign } from './kube-objects';

const owner = {
  apiVersion: 'etcd.conductor.dev/v1alpha1',
  kind: 'EtcdCluster',
  name: 'main',
  uid: 'uid-now',
  controller: true,
};
const wanted: KubernetesObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'main-peer', namespace: 'prod', ownerReferences: [owner] },
};
const existing = (ownerReferences?: (typeof owner)[]): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'main-peer', namespace: 'prod', ...(ownerReferences ? { ownerReferences } : {}) },
});

describe('refuseForeign: what createIfAbsent does with an object already there', () => {
  it('takes one the same owner holds as its own (a retry found its earlier work)', () => {
    expect(() => refuseForeign(wanted, existing([owner]), owner)).not.toThrow();
  });

  test.each<[string, KubernetesObject]>([
    ['one with no owner (made by hand)', existing()],
    ['one another kind of object owns', existing([{ ...owner, kind: 'Deployment', name: 'app', uid: 'x' }])],
    ['one another EtcdCluster owns', existing([{ ...owner, name: 'other', uid: 'uid-other' }])],
  ])('refuses %s, permanently, naming it', (_name, found) => {
    let err: unknown;
    try {
      refuseForeign(wanted, found, owner);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: FailureTypes.ObjectNotOwned, nonRetryable: true });
    expect((err as Error).message).toContain('Service prod/main-peer exists and is not EtcdCluster main');
  });

  it('waits (a retryable error) for one a former EtcdCluster of the same name still holds', () => {
    let err: unknown;
    try {
      refuseForeign(wanted, existing([{ ...owner, uid: 'uid-before' }]), owner);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(ApplicationFailure);
    expect((err as Error).message).toMatch(/former EtcdCluster main \(uid uid-before\).*garbage collector/);
  });
});
