import { createSocket } from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolvConfNameservers, startUpstreamDnsRelay } from './upstream-dns';

describe('resolvConfNameservers', () => {
  it('reads the IPv4 nameservers in order, skipping comments, options and IPv6', () => {
    const text = [
      '# generated',
      'nameserver 10.255.255.53',
      'nameserver ::1',
      'search example.org',
      'options ndots:2',
      'nameserver 127.0.0.53',
    ].join('\n');
    expect(resolvConfNameservers(text)).toEqual(['10.255.255.53', '127.0.0.53']);
  });
  it('finds none in an empty file', () => {
    expect(resolvConfNameservers('')).toEqual([]);
  });
});

describe('startUpstreamDnsRelay', () => {
  // An upstream that never answers: nothing listens on 127.0.0.1:53 here, and an unanswered UDP query waits.
  const resolvConf = join(mkdtempSync(join(tmpdir(), 'relay-')), 'resolv.conf');
  writeFileSync(resolvConf, 'nameserver 127.0.0.1\n');
  const query = Buffer.from('000101000001000000000000076578616d706c6503636f6d0000010001', 'hex');
  const ask = async (address: string) => {
    const [host, port] = address.split(':');
    const client = createSocket('udp4');
    await new Promise<void>((r) => client.send(query, Number(port), host, () => r()));
    return client;
  };
  /** A relay with one query asked and waiting for the upstream. */
  const relayWithPendingQuery = async (queryTimeoutMs: number) => {
    const relay = await startUpstreamDnsRelay('127.0.0.1', () => undefined, resolvConf, {
      port: 0,
      queryTimeoutMs,
    });
    if (!relay) throw new Error('the relay did not start');
    const client = await ask(relay.address);
    await waitFor(() => relay.pending === 1);
    return { relay, client };
  };
  const waitFor = async (check: () => boolean) => {
    for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(check()).toBe(true);
  };

  it('stops with a query still waiting, and its timer firing afterwards throws nothing', async () => {
    const { relay, client } = await relayWithPendingQuery(150);
    await relay.stop();
    expect(relay.pending).toBe(0);
    // Past the query's timeout: before the fix its timer closed the closed socket and threw (uncaught).
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    await new Promise((r) => setTimeout(r, 300));
    process.off('uncaughtException', onUncaught);
    expect(uncaught).toEqual([]);
    client.close();
  });

  it('ends a query nobody answers at its timeout', async () => {
    const { relay, client } = await relayWithPendingQuery(100);
    await waitFor(() => relay.pending === 0);
    await relay.stop();
    client.close();
  });
});
