// Decides the files a Secret, ConfigMap, downwardAPI or projected volume holds; keys become files unless items pick some.
import type { V1DownwardAPIVolumeFile, V1KeyToPath, V1Pod } from '@kubernetes/client-node';
import { ContainerConfigError, podFieldValue } from './container-env';
import type { PodRuntimeFacts } from './container-env';

export interface VolumeFile {
  /** Relative path inside the volume. */
  path: string;
  content: Buffer;
  mode: number;
}

/** Keys of a Secret/ConfigMap become files; with items, only the listed keys, at their paths (a missing key fails unless optional). */
export function keyedFiles(
  kind: 'Secret' | 'ConfigMap',
  name: string,
  data: Record<string, Buffer>,
  items: V1KeyToPath[] | undefined,
  defaultMode: number | undefined,
  optional: boolean,
): VolumeFile[] {
  const mode = defaultMode ?? 0o644;
  if (items === undefined || items.length === 0)
    return Object.keys(data).map((k) => ({ path: k, content: data[k] ?? Buffer.alloc(0), mode }));
  const files: VolumeFile[] = [];
  for (const item of items) {
    const content = data[item.key];
    if (content === undefined) {
      if (optional) continue;
      throw new ContainerConfigError(
        `${kind === 'Secret' ? 'secret' : 'configmap'} ${name} references non-existent config key: ${item.key}`,
      );
    }
    files.push({ path: item.path, content, mode: item.mode ?? mode });
  }
  return files;
}

export function downwardApiFiles(
  pod: V1Pod,
  items: V1DownwardAPIVolumeFile[] | undefined,
  defaultMode: number | undefined,
  facts: Pick<PodRuntimeFacts, 'podIp' | 'hostIp'>,
): VolumeFile[] {
  return (items ?? []).flatMap((item) => {
    if (!item.fieldRef) return [];
    return [
      {
        path: item.path,
        content: Buffer.from(podFieldValue(pod, item.fieldRef.fieldPath, facts)),
        mode: item.mode ?? defaultMode ?? 0o644,
      },
    ];
  });
}

/** Paths must stay inside the volume: no absolute paths, no `..` segments (the apiserver validates the same). */
export function safeVolumePath(path: string): boolean {
  return path.length > 0 && !path.startsWith('/') && !path.split('/').includes('..');
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A token is refreshed once 80% of its lifetime has passed or it is a day old, as the kubelet's token manager does
 * (a token the apiserver stretched to a year is still renewed daily).
 */
export function tokenNeedsRefresh(issuedAt: number, expiresAt: number, now: number): boolean {
  return now >= issuedAt + (expiresAt - issuedAt) * 0.8 || now - issuedAt > DAY_MS;
}
