// Renders self-contained kubeconfigs (certificates inlined) so a kubeconfig keeps working when copied out of the state folder.
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

export interface KubeconfigInput {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  user: string;
  clusterName?: string;
}

export function renderKubeconfig(input: KubeconfigInput): string {
  const cluster = input.clusterName ?? 'etcd-conductor-local';
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: cluster, cluster: { server: input.server, 'certificate-authority-data': b64(input.caPem) } },
    ],
    users: [
      {
        name: input.user,
        user: { 'client-certificate-data': b64(input.certPem), 'client-key-data': b64(input.keyPem) },
      },
    ],
    contexts: [{ name: cluster, context: { cluster, user: input.user } }],
    'current-context': cluster,
  });
}

export function writeKubeconfig(
  path: string,
  server: string,
  caFile: string,
  certFile: string,
  keyFile: string,
  user: string,
): void {
  const read = (f: string) => readFileSync(f, 'utf8');
  writeFileSync(
    path,
    renderKubeconfig({ server, caPem: read(caFile), certPem: read(certFile), keyPem: read(keyFile), user }),
    { mode: 0o600 },
  );
}
