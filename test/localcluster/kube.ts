// Shared by the local-stack e2e tests: API clients for the running stack and a throw-away namespace per suite.
import {
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  ApiextensionsV1Api,
  CustomObjectsApi,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { requireStackInfo, type StackInfo } from '../../localcluster/stack-info';

export interface Kube {
  info: StackInfo;
  kc: KubeConfig;
  core: CoreV1Api;
  batch: BatchV1Api;
  ext: ApiextensionsV1Api;
  custom: CustomObjectsApi;
}

export function connect(): Kube {
  const info = requireStackInfo();
  const kc = new KubeConfig();
  kc.loadFromFile(info.kubeconfig);
  return {
    info,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    batch: kc.makeApiClient(BatchV1Api),
    ext: kc.makeApiClient(ApiextensionsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

export async function createNamespace(kube: Kube, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await kube.core.createNamespace({ body: { metadata: { name } } });
  // Pods need the namespace's default ServiceAccount, which the controller manager creates.
  await eventually(
    `ServiceAccount ${name}/default`,
    async () =>
      (await kube.core.readNamespacedServiceAccount({ namespace: name, name: 'default' })) !== undefined,
    30000,
  );
  return name;
}

export async function deleteNamespace(kube: Kube, name: string): Promise<void> {
  await kube.core.deleteNamespace({ name }).catch(() => undefined);
}

export async function eventually(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 250,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      if (await check()) return;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? ` (last error: ${last})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The Status message of a failed API call (client-node 2.x puts the raw response text in `body`). */
export function apiMessage(e: unknown): string {
  const body = (e as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      return (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      return body;
    }
  }
  if (body && typeof body === 'object' && 'message' in body)
    return String((body as { message: unknown }).message);
  return e instanceof Error ? e.message : String(e);
}
