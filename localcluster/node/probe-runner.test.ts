import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolvePort, runProbe } from './probe-runner';
import type { ProbeTarget } from './probe-runner';

describe('resolvePort', () => {
  const ports = [{ name: 'client', containerPort: 2379 }];
  const cases: Array<[string, number | string, number | undefined]> = [
    ['a number is used as is', 8080, 8080],
    ['a numeric string is a number', '9090', 9090],
    ['a name is looked up among the container ports', 'client', 2379],
    ['an unknown name resolves to nothing', 'peer', undefined],
  ];
  it.each(cases)('%s', (_n, port, expected) => expect(resolvePort(port, ports)).toBe(expected));
});

describe('runProbe over the network', () => {
  let server: http.Server;
  let target: ProbeTarget;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      res.statusCode = req.url === '/ok' ? 200 : 503;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    target = {
      podIp: '127.0.0.1',
      ports: [{ name: 'http', containerPort: port }],
      pid: process.pid,
      env: {},
      resolveArgv: (c) => c,
    };
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('an HTTP 200 is a success', async () => {
    expect((await runProbe({ httpGet: { path: '/ok', port: 'http' } }, target, 1000)).ok).toBe(true);
  });
  it('an HTTP 503 is a failure with the status in the message', async () => {
    expect(await runProbe({ httpGet: { path: '/bad', port: 'http' } }, target, 1000)).toEqual({
      ok: false,
      message: 'HTTP probe failed with statuscode: 503',
    });
  });
  it('a TCP connect to a listening port succeeds', async () => {
    expect((await runProbe({ tcpSocket: { port: 'http' } }, target, 1000)).ok).toBe(true);
  });
  it('a TCP connect to a closed port fails', async () => {
    expect((await runProbe({ tcpSocket: { port: 1 } }, target, 1000)).ok).toBe(false);
  });
});
