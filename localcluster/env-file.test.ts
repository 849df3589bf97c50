import { execFileSync } from 'node:child_process';
import { renderEnvFile, shellQuote } from './env-file';
import type { StackInfo } from './stack-info';

const info: StackInfo = {
  version: 1,
  phase: 'ready',
  stateDir: '/r/.local',
  hostIp: '127.0.0.1',
  podCidr: '10.0.128.0/17',
  serviceCidr: '10.0.96.0/20',
  ownerPid: 1,
  pids: {},
  kubeconfig: '/r/.local/kubeconfig',
  apiserverUrl: 'https://127.0.0.1:6443',
  temporal: { address: '127.0.0.1:7233', namespace: 'default', uiUrl: 'http://127.0.0.1:8233' },
  s3: {
    endpoint: 'http://127.0.0.1:9000',
    bucket: 'b',
    region: 'us-east-1',
    accessKeyId: 'AK',
    secretAccessKey: "it's secret",
  },
  nodes: [],
  podReachable: { temporalAddress: '10.0.0.1:40001', s3Endpoint: 'http://10.0.0.1:40002' },
  nodeRuntime: 'real',
  podsReachHostAt: '10.0.0.1',
  tools: {
    kubectl: '/c/k/bin/kubectl',
    temporal: '/c/t/bin/temporal',
    minio: '/c/m/bin/minio',
    etcdBinDirs: { '3.6.16': '/c/e/bin' },
  },
  logsDir: '/r/.local/logs',
  startedAt: '',
  readyAt: '',
};

describe('shellQuote', () => {
  it('survives a single quote inside the value', () => expect(shellQuote("a'b")).toBe(`'a'\\''b'`));
});

describe('renderEnvFile', () => {
  it('exports what a shell needs to reach the stack, as the shell itself reads it', () => {
    const script = `${renderEnvFile(info)}\necho "$KUBECONFIG|$TEMPORAL_ADDRESS|$TEMPORAL_UI_URL|$S3_ENDPOINT|$S3_BUCKET|$AWS_ACCESS_KEY_ID|$AWS_SECRET_ACCESS_KEY"; echo "$PATH"`;
    const [vars, path] = execFileSync('sh', ['-c', script], { env: { PATH: '/usr/bin:/bin' } })
      .toString()
      .trim()
      .split('\n');
    expect(vars).toBe(
      "/r/.local/kubeconfig|127.0.0.1:7233|http://127.0.0.1:8233|http://127.0.0.1:9000|b|AK|it's secret",
    );
    expect(path).toBe('/c/k/bin:/c/e/bin:/c/t/bin:/usr/bin:/bin');
  });
});
