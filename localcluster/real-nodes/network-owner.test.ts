import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackLayout } from '../stack-layout';
import { forgetOwner, readOwner, recordOwner, startDecision } from './network-owner';

const base = { bridge: 'ec0-br', prefix: 'ec0', hostIp: '127.0.0.1', stateDir: '/w/.local' };

describe('who may build a real-node network', () => {
  test.each([
    ['no bridge yet: build', { bridgeExists: false, recorded: undefined }, 'build'],
    [
      'no bridge, a stale record: build',
      { bridgeExists: false, recorded: { hostIp: '127.0.0.1', prefix: 'ec0' } },
      'build',
    ],
    [
      'the bridge is this folder’s leftover: build (after clean-up)',
      { bridgeExists: true, recorded: { hostIp: '127.0.0.1', prefix: 'ec0' } },
      'build',
    ],
    [
      'the bridge exists, this folder never made one: refuse',
      { bridgeExists: true, recorded: undefined },
      'refuse',
    ],
    [
      'the bridge exists, this folder made another prefix: refuse',
      { bridgeExists: true, recorded: { hostIp: '127.60.0.1', prefix: 'ec60' } },
      'refuse',
    ],
  ] as const)('%s', (_name, input, action) => {
    expect(startDecision({ ...base, ...input }).action).toBe(action);
  });

  test('the refusal names the bridge, the host IP and both ways out', () => {
    const d = startDecision({ ...base, bridgeExists: true, recorded: undefined });
    expect(d).toEqual({ action: 'refuse', message: expect.stringContaining('ec0-br') });
    if (d.action === 'refuse') {
      expect(d.message).toContain('127.0.0.1');
      expect(d.message).toContain('/w/.local');
      expect(d.message).toContain('--host-ip');
    }
  });

  test('the record is written in, read from and removed from the stack’s own folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'owner-'));
    try {
      expect(readOwner(dir)).toBeUndefined();
      recordOwner(stackLayout({ repoRoot: '/r', stateDir: dir, hostIp: '127.60.0.1' }), 'ec60');
      expect(readOwner(dir)).toEqual({ hostIp: '127.60.0.1', prefix: 'ec60' });
      forgetOwner(dir);
      expect(readOwner(dir)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
