import { resolvConfNameservers } from './upstream-dns';

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
