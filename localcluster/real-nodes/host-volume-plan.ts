// Decides what the real nodes' host provisioner does: which claims get a volume folder and a PersistentVolume on the
// node the scheduler chose, and which released volumes lose their folder and their PersistentVolume. Pure, so every
// rule is a row of a table; the invariant it protects: a folder is only ever made or removed directly inside a node's
// volumes folder of this stack, and only for a volume of a provisioner this stack serves.

/** The annotation external provisioners put on every volume they make (read by the claim resizer and by `fault`). */
export const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
/** The scheduler's choice of node for a claim of a WaitForFirstConsumer class. */
export const SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** The node label a volume's node affinity names (the kubelets' hostname is their node name). */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

export interface ClaimView {
  namespace: string;
  name: string;
  uid: string;
  storageClassName?: string;
  volumeName?: string;
  selectedNode?: string;
  accessModes: string[];
  volumeMode?: string;
  /** spec.resources.requests.storage. */
  requested?: string;
  hasSelector: boolean;
  deleting: boolean;
}

export interface VolumeView {
  name: string;
  provisionedBy?: string;
  phase?: string;
  reclaimPolicy?: string;
  path?: string;
}

export interface ClassView {
  name: string;
  provisioner: string;
  reclaimPolicy?: string;
  volumeBindingMode?: string;
}

/** Where one provisioner keeps a node's volumes: node name -> folder (every node of the stack, nothing else). */
export type NodeFolders = Readonly<Record<string, string>>;
/** The provisioner names this stack serves, each with its folders. */
export type ProvisionerFolders = Readonly<Record<string, NodeFolders>>;

export interface VolumeSpec {
  name: string;
  provisioner: string;
  node: string;
  path: string;
  capacity: string;
  accessModes: string[];
  reclaimPolicy: string;
  storageClassName: string;
  claim: { namespace: string; name: string; uid: string };
}

export type HostVolumeAction =
  | { kind: 'provision'; volume: VolumeSpec }
  | { kind: 'reclaim'; volumeName: string; path: string }
  | { kind: 'refuse'; namespace: string; claimName: string; claimUid: string; reason: string };

/** The volume of a claim is named after its uid (as the external-provisioner library names it), so a retry finds it. */
export function volumeNameFor(claimUid: string): string {
  return `pvc-${claimUid}`;
}

/** local-path's folder name, `<pv>_<namespace>_<claim>`, so a folder on disk says whose it is. */
export function volumeFolder(base: string, volumeName: string, namespace: string, claim: string): string {
  return `${base}/${volumeName}_${namespace}_${claim}`;
}

const SUPPORTED_ACCESS_MODES = new Set(['ReadWriteOnce', 'ReadWriteOncePod']);

/** Pure: what to do for one claim, by an ordered chain of checks; undefined when nothing is due. */
export function claimAction(
  claim: ClaimView,
  classes: ReadonlyMap<string, ClassView>,
  existingVolumes: ReadonlySet<string>,
  folders: ProvisionerFolders,
): HostVolumeAction | undefined {
  if (claim.deleting || claim.volumeName) return undefined;
  const cls = claim.storageClassName ? classes.get(claim.storageClassName) : undefined;
  if (!cls) return undefined;
  const nodeFolders = folders[cls.provisioner];
  if (!nodeFolders) return undefined;
  const name = volumeNameFor(claim.uid);
  // Made on an earlier pass (or before a restart): the controller manager binds the claim to it.
  if (existingVolumes.has(name)) return undefined;
  const refuse = (reason: string): HostVolumeAction => ({
    kind: 'refuse',
    namespace: claim.namespace,
    claimName: claim.name,
    claimUid: claim.uid,
    reason,
  });
  if (!claim.selectedNode) {
    return cls.volumeBindingMode === 'WaitForFirstConsumer'
      ? undefined
      : refuse(
          `StorageClass ${cls.name} must use volumeBindingMode WaitForFirstConsumer: a volume is a folder on one node, which the scheduler picks`,
        );
  }
  if (claim.hasSelector) return refuse('claim.spec.selector is not supported');
  const modes = claim.accessModes.filter((m) => !SUPPORTED_ACCESS_MODES.has(m));
  if (modes.length > 0)
    return refuse(`access modes ${modes.join(', ')} are not supported (only ReadWriteOnce)`);
  if (claim.volumeMode === 'Block') return refuse('volumeMode Block is not supported (volumes are folders)');
  const base = nodeFolders[claim.selectedNode];
  if (!base)
    return refuse(`node ${claim.selectedNode} is not a node of this stack; no folder for its volumes`);
  return {
    kind: 'provision',
    volume: {
      name,
      provisioner: cls.provisioner,
      node: claim.selectedNode,
      path: volumeFolder(base, name, claim.namespace, claim.name),
      capacity: claim.requested ?? '0',
      accessModes: claim.accessModes.length > 0 ? claim.accessModes : ['ReadWriteOnce'],
      reclaimPolicy: cls.reclaimPolicy ?? 'Delete',
      storageClassName: cls.name,
      claim: { namespace: claim.namespace, name: claim.name, uid: claim.uid },
    },
  };
}

/** Pure: whether `path` is a volume folder directly inside one of the provisioner's node folders. */
export function isVolumeFolderOf(folders: NodeFolders, path: string): boolean {
  return Object.values(folders).some((base) => {
    if (!path.startsWith(`${base}/`)) return false;
    const rest = path.slice(base.length + 1);
    return rest !== '' && rest !== '.' && rest !== '..' && !rest.includes('/');
  });
}

/** Pure: what to do for one volume; only a Released volume of ours with reclaim policy Delete is reclaimed. */
export function volumeAction(volume: VolumeView, folders: ProvisionerFolders): HostVolumeAction | undefined {
  const nodeFolders = volume.provisionedBy ? folders[volume.provisionedBy] : undefined;
  if (!nodeFolders) return undefined;
  if (volume.phase !== 'Released' || volume.reclaimPolicy !== 'Delete') return undefined;
  // A path outside our folders is never removed; the volume stays Released for a person to look at.
  if (!volume.path || !isVolumeFolderOf(nodeFolders, volume.path)) return undefined;
  return { kind: 'reclaim', volumeName: volume.name, path: volume.path };
}

/** Pure: every action due, volumes reclaimed first (they free room on a size-limited node folder). */
export function planHostVolumes(
  claims: readonly ClaimView[],
  volumes: readonly VolumeView[],
  classes: readonly ClassView[],
  folders: ProvisionerFolders,
): HostVolumeAction[] {
  const byName = new Map(classes.map((c) => [c.name, c]));
  const existing = new Set(volumes.map((v) => v.name));
  const actions: HostVolumeAction[] = [];
  for (const v of volumes) {
    const a = volumeAction(v, folders);
    if (a) actions.push(a);
  }
  for (const c of claims) {
    const a = claimAction(c, byName, existing, folders);
    if (a) actions.push(a);
  }
  return actions;
}
