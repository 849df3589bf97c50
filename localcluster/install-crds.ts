// Installs the project's CRDs (crds/*.yaml) into the local stack and waits until the apiserver serves them, as `kubectl apply` and a wait would.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiextensionsV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { waitFor } from './wait-for';

export async function installCrds(
  kubeconfigPath: string,
  crdDir: string,
  log: (line: string) => void,
): Promise<string[]> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const file of readdirSync(crdDir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(crdDir, file), 'utf8'))) {
      const crd = doc.toJS() as V1CustomResourceDefinition | null;
      if (crd?.kind !== 'CustomResourceDefinition' || !crd.metadata?.name) continue;
      const name = crd.metadata.name;
      // Server-side apply: creates or updates, and a second `up` changes nothing.
      await api.patchCustomResourceDefinition(
        { name, body: crd, fieldManager: 'etcd-conductor-local', force: true },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      );
      names.push(name);
    }
  }
  for (const name of names) {
    await waitFor(
      `CRD ${name} established`,
      async () => {
        const crd = await api.readCustomResourceDefinition({ name });
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
      },
      { timeoutMs: 30_000 },
    );
  }
  log(`stack: CRDs installed: ${names.join(', ')}`);
  return names;
}
