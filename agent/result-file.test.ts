// The result file: written whole, replacing what was there; the default termination log is never created where it is missing.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeResultFile } from './result-file';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'result-file-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('an explicit result file is created and holds exactly the line', () => {
  const path = join(dir, 'result.json');
  writeResultFile(path, '{"ok":true,"restored":false}', true);
  expect(readFileSync(path, 'utf8')).toBe('{"ok":true,"restored":false}\n');
});

it('an existing termination log is overwritten in place, not appended to', () => {
  const path = join(dir, 'termination-log');
  writeFileSync(path, 'x'.repeat(500));
  writeResultFile(path, '{"ok":true,"restored":false}', false);
  expect(readFileSync(path, 'utf8')).toBe('{"ok":true,"restored":false}\n');
});

it('a missing termination log is not created', () => {
  const path = join(dir, 'termination-log');
  expect(() => writeResultFile(path, '{}', false)).toThrow(/ENOENT/);
  expect(existsSync(path)).toBe(false);
});
