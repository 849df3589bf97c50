// Materialises a Pod's volumes as directories on this machine; config volumes are rewritten file by file (tmp + rename) so readers never see half a file.
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CoreV1Api, V1KeyToPath, V1Pod, V1Volume } from '@kubernetes/client-node';
import { ContainerConfigError } from './container-env';
import type { PodRuntimeFacts } from './container-env';
import { downwardApiFiles, keyedFiles, safeVolumePath, tokenNeedsRefresh } from './volume-files';
import type { VolumeFile } from './volume-files';

/** A volume that cannot be set up yet (missing Secret, unbound claim); the Pod's containers stay ContainerCreating. */
export class VolumeNotReadyError extends Error {}

export interface MaterialisedVolume {
  hostPath: string;
  /** Secret, ConfigMap, downwardAPI and projected volumes are always mounted read-only. */
  readOnly: boolean;
}

interface CachedToken {
  token: string;
  issuedAt: number;
  expiresAt: number;
}

export interface PodVolumeContext {
  core: CoreV1Api;
  pod: V1Pod;
  podDir: string;
  facts: Pick<PodRuntimeFacts, 'podIp' | 'hostIp'>;
  /** Tokens already issued for this Pod, keyed by volume and path; reused until 80% of their lifetime. */
  tokens: Map<string, CachedToken>;
  now: () => number;
}

function apiCode(e: unknown): number | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? (e as { code: number }).code : undefined;
}

async function readData(
  ctx: PodVolumeContext,
  kind: 'Secret' | 'ConfigMap',
  name: string,
): Promise<Record<string, Buffer> | undefined> {
  const namespace = ctx.pod.metadata?.namespace ?? 'default';
  try {
    if (kind === 'Secret') {
      const s = await ctx.core.readNamespacedSecret({ name, namespace });
      return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
    }
    const c = await ctx.core.readNamespacedConfigMap({ name, namespace });
    return {
      ...Object.fromEntries(Object.entries(c.data ?? {}).map(([k, v]) => [k, Buffer.from(v)])),
      ...Object.fromEntries(
        Object.entries(c.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
      ),
    };
  } catch (e) {
    if (apiCode(e) === 404) return undefined;
    throw e;
  }
}

async function sourceFiles(
  ctx: PodVolumeContext,
  kind: 'Secret' | 'ConfigMap',
  name: string,
  items: V1KeyToPath[] | undefined,
  mode: number | undefined,
  optional: boolean,
): Promise<VolumeFile[]> {
  const data = await readData(ctx, kind, name);
  if (data === undefined) {
    if (optional) return [];
    throw new VolumeNotReadyError(`${kind === 'Secret' ? 'secret' : 'configmap'} "${name}" not found`);
  }
  try {
    return keyedFiles(kind, name, data, items, mode, optional);
  } catch (e) {
    if (e instanceof ContainerConfigError) throw new VolumeNotReadyError(e.message);
    throw e;
  }
}

async function serviceAccountToken(
  ctx: PodVolumeContext,
  key: string,
  audience: string | undefined,
  expirationSeconds: number,
): Promise<string> {
  const cached = ctx.tokens.get(key);
  if (cached !== undefined && !tokenNeedsRefresh(cached.issuedAt, cached.expiresAt, ctx.now()))
    return cached.token;
  const md = ctx.pod.metadata ?? {};
  const tr = await ctx.core.createNamespacedServiceAccountToken({
    name: ctx.pod.spec?.serviceAccountName ?? 'default',
    namespace: md.namespace ?? 'default',
    body: {
      spec: {
        audiences: audience ? [audience] : [],
        expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: md.name ?? '', uid: md.uid ?? '' },
      },
    },
  });
  const token = tr.status?.token ?? '';
  const issuedAt = ctx.now();
  const expiresAt = tr.status?.expirationTimestamp
    ? new Date(tr.status.expirationTimestamp).getTime()
    : issuedAt + expirationSeconds * 1000;
  ctx.tokens.set(key, { token, issuedAt, expiresAt });
  return token;
}

function listFiles(dir: string): string[] {
  let out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out = out.concat(listFiles(p));
    else out.push(p);
  }
  return out;
}

/** Writes exactly these files into dir: changed files replaced atomically, files no longer listed removed. */
export function writeVolumeDir(dir: string, files: VolumeFile[]): void {
  mkdirSync(dir, { recursive: true });
  const wanted = new Set<string>();
  for (const f of files) {
    if (!safeVolumePath(f.path)) continue;
    const target = join(dir, f.path);
    wanted.add(target);
    mkdirSync(dirname(target), { recursive: true });
    const tmp = join(dirname(target), `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
    writeFileSync(tmp, f.content);
    chmodSync(tmp, f.mode);
    renameSync(tmp, target);
  }
  for (const existing of listFiles(dir)) if (!wanted.has(existing)) rmSync(existing, { force: true });
}

/** Where a claim's data lives: the hostPath (or local path) of the PersistentVolume the claim is bound to. */
async function claimPath(ctx: PodVolumeContext, claimName: string): Promise<string> {
  const namespace = ctx.pod.metadata?.namespace ?? 'default';
  let volumeName: string | undefined;
  try {
    const pvc = await ctx.core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace });
    if (pvc.metadata?.deletionTimestamp)
      throw new VolumeNotReadyError(`persistentvolumeclaim "${claimName}" is being deleted`);
    volumeName = pvc.spec?.volumeName;
  } catch (e) {
    if (apiCode(e) === 404) throw new VolumeNotReadyError(`persistentvolumeclaim "${claimName}" not found`);
    throw e;
  }
  if (!volumeName) throw new VolumeNotReadyError(`persistentvolumeclaim "${claimName}" is not bound`);
  const pv = await ctx.core.readPersistentVolume({ name: volumeName });
  const path = pv.spec?.hostPath?.path ?? pv.spec?.local?.path;
  if (!path) throw new VolumeNotReadyError(`persistentvolume "${volumeName}" has no hostPath or local path`);
  mkdirSync(path, { recursive: true });
  return path;
}

async function materialiseOne(ctx: PodVolumeContext, v: V1Volume): Promise<MaterialisedVolume | undefined> {
  const base = join(ctx.podDir, 'volumes');
  if (v.emptyDir) {
    const hostPath = join(base, 'empty-dir', v.name);
    mkdirSync(hostPath, { recursive: true });
    return { hostPath, readOnly: false };
  }
  if (v.hostPath) {
    if (v.hostPath.type === 'DirectoryOrCreate') mkdirSync(v.hostPath.path, { recursive: true });
    return { hostPath: v.hostPath.path, readOnly: false };
  }
  if (v.persistentVolumeClaim)
    return {
      hostPath: await claimPath(ctx, v.persistentVolumeClaim.claimName),
      readOnly: v.persistentVolumeClaim.readOnly ?? false,
    };
  let files: VolumeFile[] | undefined;
  let kind = '';
  if (v.secret) {
    kind = 'secret';
    files = await sourceFiles(
      ctx,
      'Secret',
      v.secret.secretName ?? '',
      v.secret.items,
      v.secret.defaultMode,
      v.secret.optional ?? false,
    );
  } else if (v.configMap) {
    kind = 'configmap';
    files = await sourceFiles(
      ctx,
      'ConfigMap',
      v.configMap.name ?? '',
      v.configMap.items,
      v.configMap.defaultMode,
      v.configMap.optional ?? false,
    );
  } else if (v.downwardAPI) {
    kind = 'downward-api';
    files = downwardApiFiles(ctx.pod, v.downwardAPI.items, v.downwardAPI.defaultMode, ctx.facts);
  } else if (v.projected) {
    kind = 'projected';
    files = [];
    const mode = v.projected.defaultMode;
    for (const s of v.projected.sources ?? []) {
      if (s.secret)
        files.push(
          ...(await sourceFiles(
            ctx,
            'Secret',
            s.secret.name ?? '',
            s.secret.items,
            mode,
            s.secret.optional ?? false,
          )),
        );
      if (s.configMap)
        files.push(
          ...(await sourceFiles(
            ctx,
            'ConfigMap',
            s.configMap.name ?? '',
            s.configMap.items,
            mode,
            s.configMap.optional ?? false,
          )),
        );
      if (s.downwardAPI) files.push(...downwardApiFiles(ctx.pod, s.downwardAPI.items, mode, ctx.facts));
      if (s.serviceAccountToken) {
        const t = s.serviceAccountToken;
        const token = await serviceAccountToken(
          ctx,
          `${v.name}/${t.path}`,
          t.audience,
          t.expirationSeconds ?? 3600,
        );
        files.push({ path: t.path, content: Buffer.from(token), mode: mode ?? 0o644 });
      }
    }
  }
  if (files === undefined) return undefined;
  const hostPath = join(base, kind, v.name);
  writeVolumeDir(hostPath, files);
  return { hostPath, readOnly: true };
}

/** Sets up (or refreshes) every volume of the Pod; throws VolumeNotReadyError with a kubelet-like message when one cannot be set up. */
export async function materialisePodVolumes(ctx: PodVolumeContext): Promise<Map<string, MaterialisedVolume>> {
  const out = new Map<string, MaterialisedVolume>();
  for (const v of ctx.pod.spec?.volumes ?? []) {
    const m = await materialiseOne(ctx, v);
    if (m !== undefined) out.set(v.name, m);
  }
  return out;
}

/** Removes the Pod's emptyDirs and config volume copies; claims and hostPaths live elsewhere and stay. */
export function removePodVolumes(podDir: string): void {
  rmSync(join(podDir, 'volumes'), { recursive: true, force: true });
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
