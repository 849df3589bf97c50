// Reads a Jest log on stdin (`PASS test/x.test.ts (123.4 s)` lines, as `npm test` prints them) and writes
// test/durations.json: each test file's duration in whole seconds, for test/support/duration-sequencer.js. The log's
// figure replaces the recorded one; files absent from the log keep theirs.
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const target = join(__dirname, '..', 'durations.json');
const line = /^\s*(?:PASS|FAIL)\s+(?:(?:unit|e2e)\s+)?(\S+\.test\.ts)\s+\((\d+(?:\.\d+)?) s\)/;
const figures = { ...require(target) };
for (const text of readFileSync(0, 'utf8').split('\n')) {
  const m = line.exec(text.replace(/\x1b\[[0-9;]*m/g, ''));
  if (!m) continue;
  figures[m[1]] = Math.round(Number(m[2]));
}
const sorted = Object.fromEntries(Object.entries(figures).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(target, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`record-durations: ${Object.keys(sorted).length} files in ${target}`);
