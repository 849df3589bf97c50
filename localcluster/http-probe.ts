// One HTTP(S) GET with a short timeout, for health checks of local servers; TLS verification is on unless the caller opts out for self-signed component certs.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface ProbeTls {
  ca?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
}

export interface ProbeResult {
  status: number;
  body: string;
}

export function httpGet(url: string, tls: ProbeTls = {}, timeoutMs = 2000): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const opts = {
      method: 'GET',
      timeout: timeoutMs,
      ...(u.protocol === 'https:'
        ? { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: !tls.insecure }
        : {}),
    };
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, opts, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

export async function isOk(url: string, tls: ProbeTls = {}): Promise<boolean> {
  return (await httpGet(url, tls)).status === 200;
}
