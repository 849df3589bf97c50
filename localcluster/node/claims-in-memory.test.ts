// The in-memory claims folder: a link from the state folder, kept out of the way of claims already on disk, gone at down.
import { existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryClaimsDir, removeMemoryClaims, useMemoryClaims } from './claims-in-memory';

describe('claims in memory', () => {
  let root: string;
  let stateDir: string;
  let shm: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'claims-mem-'));
    stateDir = join(root, 'state');
    shm = join(root, 'shm');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('links <state>/claims to a folder of its own in memory, and down removes both', () => {
    const used = useMemoryClaims(stateDir, shm);
    expect(used).toEqual({ dir: memoryClaimsDir(stateDir, shm) });
    expect(readlinkSync(join(stateDir, 'claims'))).toBe(used.dir);
    writeFileSync(join(stateDir, 'claims', 'x'), 'data');
    expect(existsSync(join(used.dir, 'x'))).toBe(true);
    // Again (a second up): the same folder, its data kept.
    expect(useMemoryClaims(stateDir, shm).dir).toBe(used.dir);
    expect(existsSync(join(used.dir, 'x'))).toBe(true);
    removeMemoryClaims(stateDir, shm);
    expect(existsSync(join(stateDir, 'claims'))).toBe(false);
    expect(existsSync(used.dir)).toBe(false);
  });

  it('keeps claims already on disk where they are', () => {
    mkdirSync(join(stateDir, 'claims', 'ns_data-m-0_uid'), { recursive: true });
    const used = useMemoryClaims(stateDir, shm);
    expect(used.kept).toMatch(/holds claims on disk/);
    expect(existsSync(join(stateDir, 'claims', 'ns_data-m-0_uid'))).toBe(true);
    removeMemoryClaims(stateDir, shm);
    expect(existsSync(join(stateDir, 'claims', 'ns_data-m-0_uid'))).toBe(true);
  });

  it('gives two state folders two folders', () => {
    expect(memoryClaimsDir('/a/.local', shm)).not.toBe(memoryClaimsDir('/b/.local', shm));
  });
});
