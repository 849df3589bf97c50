import { stackLayout } from '../stack-layout';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FILL_FILE,
  fillRefusal,
  freezerCgroup,
  MAX_FILL_BYTES,
  partitionRules,
  partitionTag,
  topUp,
} from './node-faults';
import { realNodeLayout } from './real-node-layout';

const net = realNodeLayout(stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.20.0.1' }));

describe('partitionRules', () => {
  const rules = partitionRules(net, 'node-a');
  it('drops traffic to and from both other nodes and their Pod CIDRs, in and through node-a', () => {
    const sources = rules.filter((r) => r[1] === '-s').map((r) => `${r[0]} ${r[2]}`);
    const targets = rules.filter((r) => r[1] === '-d').map((r) => `${r[0]} ${r[2]}`);
    expect(sources.sort()).toEqual(
      [
        'FORWARD 10.20.0.12',
        'FORWARD 10.20.0.13',
        'FORWARD 10.20.129.0/24',
        'FORWARD 10.20.130.0/24',
        'INPUT 10.20.0.12',
        'INPUT 10.20.0.13',
        'INPUT 10.20.129.0/24',
        'INPUT 10.20.130.0/24',
      ].sort(),
    );
    expect(targets.map((t) => t.replace(/^OUTPUT|^FORWARD/, '')).sort()).toEqual(
      sources.map((t) => t.replace(/^INPUT|^FORWARD/, '')).sort(),
    );
  });
  it('never cuts the host (the apiserver relay, the tests) off, and tags every rule for heal and down', () => {
    expect(rules.flat()).not.toContain(net.bridgeIp);
    expect(rules.flat()).not.toContain('10.20.0.11');
    for (const r of rules)
      expect(r).toEqual(expect.arrayContaining(['--comment', partitionTag(net), 'DROP']));
  });
  it('refuses a node the stack does not have', () => {
    expect(() => partitionRules(net, 'node-z')).toThrow('no node node-z');
  });
});

describe('freezerCgroup', () => {
  it('finds the freezer hierarchy among the v1 controllers', () => {
    const text = [
      '12:pids:/etcd-conductor-ec20-node-a/kubepods/podX/abc',
      '5:freezer:/etcd-conductor-ec20-node-a/kubepods/podX/abc',
      '0::/',
    ].join('\n');
    expect(freezerCgroup(text)).toBe('/etcd-conductor-ec20-node-a/kubepods/podX/abc');
    expect(freezerCgroup('0::/user.slice')).toBeUndefined();
  });
});

describe('fillRefusal', () => {
  const node = net.nodes[0]!;
  const sized = node.sizedVolumesDir;
  it.each([
    ['a volume folder of the sized class', `${sized}/pvc-1_ns_data-m-0`, 256 << 20, undefined],
    [
      'a default-class volume (the machine disk)',
      `${node.volumesDir}/pvc-1_ns_data-m-0`,
      256 << 20,
      /not a volume of the size-limited/,
    ],
    ['the sized folder itself', sized, 256 << 20, /not a volume of the size-limited/],
    ['a folder below a volume', `${sized}/pvc-1/member`, 256 << 20, /not a volume of the size-limited/],
    ['a path that climbs out', `${sized}/..`, 256 << 20, /not a volume of the size-limited/],
    [
      "another node's sized folder",
      `${net.nodes[1]!.sizedVolumesDir}/pvc-2`,
      256 << 20,
      /not a volume of the size-limited/,
    ],
    ['a look-alike prefix', `${sized}-other/pvc-1`, 256 << 20, /not a volume of the size-limited/],
    ['a filesystem too big to fill', `${sized}/pvc-1`, MAX_FILL_BYTES + 1, /at most/],
    ['a filesystem of no size', `${sized}/pvc-1`, 0, /at most/],
  ])('%s', (_what, dir, bytes, expected) => {
    const r = fillRefusal(node, dir, bytes);
    if (expected === undefined) expect(r).toBeUndefined();
    else expect(r).toMatch(expected);
  });
});

describe('topUp', () => {
  const dir = mkdtempSync(join(tmpdir(), 'topup-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('appends to the fill file, never past its limit, in the largest pieces that fit', () => {
    const limit = 2 * 1024 * 1024 + 3 * 4096 + 700;
    expect(topUp(dir, limit)).toBe(2 * 1024 * 1024 + 3 * 4096 + 512);
    expect(topUp(dir, 1024)).toBe(1024);
    expect(topUp(dir, 100)).toBe(0);
    expect(statSync(join(dir, FILL_FILE)).size).toBe(2 * 1024 * 1024 + 3 * 4096 + 512 + 1024);
  });
});
