// Decides which PersistentVolumes the claim binder creates, binds and deletes; one volume per claim, named after the claim's uid.

export const BINDER_LABEL = 'etcd-conductor.io/claim-binder';

export interface ClaimView {
  namespace: string;
  name: string;
  uid: string;
  volumeName?: string;
  phase?: string;
  storage: string;
  accessModes: string[];
  storageClassName?: string;
  volumeMode?: string;
}

export interface VolumeView {
  name: string;
  /** Only volumes this binder made are ever deleted. */
  ours: boolean;
  claimUid?: string;
  phase?: string;
}

export type ClaimAction =
  | { kind: 'create-volume'; claim: ClaimView; volumeName: string; dataDir: string }
  | { kind: 'bind-claim'; claim: ClaimView; volumeName: string }
  | { kind: 'delete-volume'; volumeName: string; dataDir: string };

export function volumeNameFor(uid: string): string {
  return `pvc-${uid}`;
}

export function claimDataDir(claimsDir: string, namespace: string, name: string, uid: string): string {
  return `${claimsDir}/${namespace}_${name}_${uid}`;
}

/**
 * A pending claim without a volume gets one, then is bound to it; a claim already naming some volume is left to
 * whoever bound it; a volume of ours whose claim no longer exists is deleted together with its data. A claim
 * naming a StorageClass that does not exist stays Pending, as the volume controller leaves it ("storageclass
 * not found"), until the class is created.
 */
export function planClaims(
  claims: ClaimView[],
  volumes: VolumeView[],
  claimsDir: string,
  dataDirOf: (volumeName: string) => string | undefined,
  classExists: (name: string) => boolean = () => true,
): ClaimAction[] {
  const actions: ClaimAction[] = [];
  const volumeNames = new Set(volumes.map((v) => v.name));
  const claimUids = new Set(claims.map((c) => c.uid));
  for (const claim of claims) {
    if (claim.volumeMode === 'Block') continue;
    const ours = volumeNameFor(claim.uid);
    if (claim.volumeName && claim.volumeName !== ours) continue;
    if (!volumeNames.has(ours) && claim.storageClassName && !classExists(claim.storageClassName)) continue;
    if (!volumeNames.has(ours))
      actions.push({
        kind: 'create-volume',
        claim,
        volumeName: ours,
        dataDir: claimDataDir(claimsDir, claim.namespace, claim.name, claim.uid),
      });
    if (!claim.volumeName || claim.phase !== 'Bound')
      actions.push({ kind: 'bind-claim', claim, volumeName: ours });
  }
  for (const v of volumes) {
    if (!v.ours || v.claimUid === undefined || claimUids.has(v.claimUid)) continue;
    actions.push({ kind: 'delete-volume', volumeName: v.name, dataDir: dataDirOf(v.name) ?? '' });
  }
  return actions;
}
