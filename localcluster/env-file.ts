// Renders `.local/env.sh`, the shell view of a ready stack: sourcing it points kubectl, etcdctl, temporal and S3 clients at this stack and nothing else.
import { dirname } from 'node:path';
import type { StackInfo } from './stack-info';
import { BACKING_ETCD_VERSION } from './versions';

/** Single-quoted for POSIX shells; a quote inside becomes '\''. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function renderEnvFile(info: StackInfo): string {
  const etcdDir = info.tools.etcdBinDirs[BACKING_ETCD_VERSION];
  const pathDirs = [
    ...new Set([dirname(info.tools.kubectl), ...(etcdDir ? [etcdDir] : []), dirname(info.tools.temporal)]),
  ];
  const vars: Array<[string, string]> = [
    ['KUBECONFIG', info.kubeconfig],
    ['TEMPORAL_ADDRESS', info.temporal.address],
    ['TEMPORAL_NAMESPACE', info.temporal.namespace],
    ['TEMPORAL_UI_URL', info.temporal.uiUrl],
    ['S3_ENDPOINT', info.s3.endpoint],
    ['S3_BUCKET', info.s3.bucket],
    ['AWS_REGION', info.s3.region],
    ['AWS_ACCESS_KEY_ID', info.s3.accessKeyId],
    ['AWS_SECRET_ACCESS_KEY', info.s3.secretAccessKey],
  ];
  return [
    '# Written by `npm run up` / `npm start` for the local stack; source it: . .local/env.sh',
    ...vars.map(([k, v]) => `export ${k}=${shellQuote(v)}`),
    `export PATH=${pathDirs.map(shellQuote).join(':')}:"$PATH"`,
    '',
  ].join('\n');
}
