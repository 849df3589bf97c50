import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderHostsBlock } from './hosts-block';
import { hostEntries, writeHostsBlock } from './host-names';

describe('hostEntries', () => {
  it("names ClusterIP Services by their ClusterIP and headless Services' named endpoints by their Pod IPs", () => {
    const entries = hostEntries(
      [
        { namespace: 'default', name: 'rn-client', clusterIp: '10.60.101.36' },
        { namespace: 'default', name: 'rn-peer', clusterIp: 'None' },
      ],
      [
        {
          namespace: 'default',
          service: 'rn-peer',
          endpoints: [
            { hostname: 'rn-0', addresses: ['10.60.130.2'] },
            { hostname: undefined, addresses: ['10.60.128.9'] },
          ],
        },
        // A ClusterIP Service's endpoints are reached through its ClusterIP, never by name.
        {
          namespace: 'default',
          service: 'rn-client',
          endpoints: [{ hostname: 'rn-0', addresses: ['10.60.130.2'] }],
        },
      ],
    );
    expect(entries).toEqual([
      { ip: '10.60.101.36', name: 'rn-client.default.svc' },
      { ip: '10.60.101.36', name: 'rn-client.default.svc.cluster.local' },
      { ip: '10.60.130.2', name: 'rn-0.rn-peer.default.svc' },
      { ip: '10.60.130.2', name: 'rn-0.rn-peer.default.svc.cluster.local' },
    ]);
  });
});

describe('writeHostsBlock', () => {
  const block = (ip: string) => renderHostsBlock('ec60', [{ ip, name: 'c-client.ns.svc' }]);

  it("restores this stack's block after another stack's read-modify-rename carried back the file without it", () => {
    const hosts = join(mkdtempSync(join(tmpdir(), 'hosts-')), 'hosts');
    writeFileSync(hosts, '127.0.0.1 localhost\n');
    writeHostsBlock(hosts, 'ec60', block('10.60.96.10'));
    expect(readFileSync(hosts, 'utf8')).toMatch(/^10\.60\.96\.10\s+c-client\.ns\.svc$/m);
    // Another stack read the file before that write and renamed its own copy over it.
    writeFileSync(hosts, '127.0.0.1 localhost\n');
    writeHostsBlock(hosts, 'ec60', block('10.60.96.10'));
    expect(readFileSync(hosts, 'utf8')).toMatch(/^10\.60\.96\.10\s+c-client\.ns\.svc$/m);
  });

  it('leaves a file that already holds the block untouched', () => {
    const hosts = join(mkdtempSync(join(tmpdir(), 'hosts-')), 'hosts');
    writeFileSync(hosts, '127.0.0.1 localhost\n');
    writeHostsBlock(hosts, 'ec60', block('10.60.96.10'));
    const before = statSync(hosts).ino;
    writeHostsBlock(hosts, 'ec60', block('10.60.96.10'));
    expect(statSync(hosts).ino).toBe(before);
  });
});
