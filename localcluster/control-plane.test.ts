import {
  apiserverArgs,
  apiserverSans,
  controllerManagerArgs,
  etcdArgs,
  schedulerArgs,
} from './control-plane';
import { pkiPaths } from './pki';
import { stackLayout } from './stack-layout';

const layout = stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.77.0.1' });
const pki = pkiPaths('/s/pki', [{ file: 'admin', commonName: 'admin', organizations: ['system:masters'] }]);
const flag = (args: string[], name: string) =>
  args
    .find((a) => a.startsWith(`--${name}=`))
    ?.split('=')
    .slice(1)
    .join('=');

describe('control plane flags', () => {
  const everyServer: Array<[string, string[], string]> = [
    ['etcd listens for clients on the host IP only', etcdArgs(layout), 'listen-client-urls'],
    ['etcd listens for peers on the host IP only', etcdArgs(layout), 'listen-peer-urls'],
    ['the apiserver binds to the host IP only', apiserverArgs(layout, pki), 'bind-address'],
    ['the controller manager binds to the host IP only', controllerManagerArgs(layout, pki), 'bind-address'],
    ['the scheduler binds to the host IP only', schedulerArgs(layout), 'bind-address'],
  ];
  it.each(everyServer)('%s', (_n, args, name) => expect(flag(args, name)).toContain('127.77.0.1'));

  it('keeps the default admission chain and authorizes with Node and RBAC', () => {
    const args = apiserverArgs(layout, pki);
    expect(
      args.some((a) => a.startsWith('--disable-admission-plugins') || a.startsWith('--admission-control')),
    ).toBe(false);
    expect(flag(args, 'authorization-mode')).toBe('Node,RBAC');
    expect(flag(args, 'service-cluster-ip-range')).toBe(layout.serviceCidr);
  });
  it("advertises the node bridge's address, which Pods reach, as the kubernetes Service's endpoint", () => {
    const args = apiserverArgs(layout, pki);
    expect(flag(args, 'advertise-address')).toBe('10.77.0.1');
    expect(flag(args, 'endpoint-reconciler-type')).toBeUndefined();
  });
  it('runs every default controller under its own service account, without leader election', () => {
    const args = controllerManagerArgs(layout, pki);
    expect(flag(args, 'controllers')).toBe('*');
    expect(flag(args, 'use-service-account-credentials')).toBe('true');
    expect(flag(args, 'service-account-private-key-file')).toBe(pki.serviceAccountKey);
    expect(flag(args, 'leader-elect')).toBe('false');
    expect(flag(schedulerArgs(layout), 'leader-elect')).toBe('false');
  });
  it('names the host IP, loopback and the kubernetes Service address in the serving certificate', () => {
    const sans = apiserverSans(layout);
    expect(sans.ips).toEqual(['127.77.0.1', '127.0.0.1', '10.77.96.1']);
    expect(sans.dnsNames).toContain('kubernetes.default.svc.cluster.local');
  });
});
