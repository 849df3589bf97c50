// Maps container images to executables on this machine: etcd images by tag to the etcd built for that version, the project's image to its agent and operator; anything else is unknown, as a failed pull would be.
import { join } from 'node:path';
import type { ImageResolution, ImageTable } from './node/types';
import type { EtcdVersion } from './versions';
import { OPERATOR_NODE_FLAGS } from '../contracts/node-flags';

export const PROJECT_IMAGE_REPOSITORY = 'ghcr.io/etcd-conductor/etcd-conductor';
/**
 * The project image's two programs, on its PATH and in /usr/local/bin: the agent (also the entrypoint, which snapshot
 * Jobs and restore init containers run) and the operator, which the chart's Deployment names as its command.
 */
export const AGENT_COMMAND = 'etcd-conductor';
export const OPERATOR_COMMAND = 'etcd-conductor-operator';

const ETCD_REPOSITORIES = [
  'quay.io/coreos/etcd',
  'gcr.io/etcd-development/etcd',
  'registry.k8s.io/etcd',
] as const;

export interface ImageTableInputs {
  repoRoot: string;
  /** Folder holding etcd, etcdctl and etcdutl, by version. */
  etcdBinDirs: Record<EtcdVersion, string>;
  /** The etcd whose etcd/etcdctl/etcdutl the project's image carries (restore, snapshot and verify need them). */
  projectEtcdVersion: EtcdVersion;
}

/** Splits `repo[:tag][@digest]`; a colon inside the registry host (a port) is not a tag. */
export function parseImage(image: string): { repository: string; tag: string | undefined } {
  const withoutDigest = image.split('@')[0] ?? image;
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  if (colon > slash)
    return { repository: withoutDigest.slice(0, colon), tag: withoutDigest.slice(colon + 1) };
  return { repository: withoutDigest, tag: undefined };
}

/** `v3.6.16` for quay/gcr, `3.6.16-0` for registry.k8s.io; returns the bare version or undefined. */
export function etcdVersionOfTag(repository: string, tag: string | undefined): string | undefined {
  if (!tag) return undefined;
  const m =
    repository === 'registry.k8s.io/etcd'
      ? /^(\d+\.\d+\.\d+)-\d+$/.exec(tag)
      : /^v(\d+\.\d+\.\d+)$/.exec(tag);
  return m?.[1];
}

function commandsFrom(binDir: string, names: string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const n of names) {
    out[n] = [join(binDir, n)];
    out[`/usr/local/bin/${n}`] = [join(binDir, n)];
  }
  return out;
}

export function createImageTable(inputs: ImageTableInputs): ImageTable {
  const versions = new Map<string, string>(Object.entries(inputs.etcdBinDirs));
  return (image: string): ImageResolution | undefined => {
    const { repository, tag } = parseImage(image);
    if ((ETCD_REPOSITORIES as readonly string[]).includes(repository)) {
      const version = etcdVersionOfTag(repository, tag);
      const binDir = version ? versions.get(version) : undefined;
      if (!binDir) return undefined;
      return {
        commands: commandsFrom(binDir, ['etcd', 'etcdctl', 'etcdutl']),
        entrypoint: [join(binDir, 'etcd')],
        path: [binDir],
        roots: [binDir],
      };
    }
    if (repository === PROJECT_IMAGE_REPOSITORY) {
      const node = join(inputs.repoRoot, 'node_modules', '.bin', 'node');
      const agent = [node, join(inputs.repoRoot, 'dist', 'agent', 'main.js')];
      const operator = [node, ...OPERATOR_NODE_FLAGS, join(inputs.repoRoot, 'dist', 'worker', 'main.js')];
      const etcdDir = inputs.etcdBinDirs[inputs.projectEtcdVersion];
      return {
        commands: {
          ...commandsFrom(etcdDir, ['etcd', 'etcdctl', 'etcdutl']),
          [AGENT_COMMAND]: agent,
          [`/usr/local/bin/${AGENT_COMMAND}`]: agent,
          [OPERATOR_COMMAND]: operator,
          [`/usr/local/bin/${OPERATOR_COMMAND}`]: operator,
          node: [node],
        },
        entrypoint: agent,
        path: [etcdDir],
        roots: [inputs.repoRoot, etcdDir],
      };
    }
    return undefined;
  };
}
