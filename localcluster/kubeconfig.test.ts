import { parse } from 'yaml';
import { renderKubeconfig } from './kubeconfig';

describe('renderKubeconfig', () => {
  it('inlines CA, certificate and key as base64 and selects its only context', () => {
    const doc = parse(
      renderKubeconfig({
        server: 'https://127.0.0.1:6443',
        caPem: 'CA',
        certPem: 'CERT',
        keyPem: 'KEY',
        user: 'admin',
      }),
    );
    expect(doc['current-context']).toBe('etcd-conductor-local');
    expect(doc.clusters[0].cluster).toEqual({
      server: 'https://127.0.0.1:6443',
      'certificate-authority-data': 'Q0E=',
    });
    expect(doc.users[0]).toEqual({
      name: 'admin',
      user: { 'client-certificate-data': 'Q0VSVA==', 'client-key-data': 'S0VZ' },
    });
    expect(doc.contexts[0].context).toEqual({ cluster: 'etcd-conductor-local', user: 'admin' });
  });
});
