// The last lines `npm test` prints: what each group of the suite did, and, when something failed, the machine and the
// stack as the suite left them. CI shows only the tail of a run's output, so a failure in an early group must be named
// here, at the end, in a few lines: Session 27's CI run failed in two groups and its shown tail named only the last.
//
// Usage (test/run-suite.sh): node test/support/suite-report.js <folder of Jest --json files> <stack state folder>
// Each group's Jest run wrote <folder>/<group>.json (`--json --outputFile`).
const { readFileSync, readdirSync, statfsSync, existsSync } = require('node:fs');
const { loadavg, freemem, totalmem } = require('node:os');
const { join, relative } = require('node:path');

/** At most this many failed tests are named per group; the rest are counted. */
const MAX_NAMED = 6;
const MAX_LINE = 220;

const stripAnsi = (s) => s.replace(/\x1b\[[0-9;]*m/g, '');
const clip = (s) => (s.length > MAX_LINE ? `${s.slice(0, MAX_LINE - 3)}...` : s);
/** The first line of a failure that says something (Jest's messages may start with blank lines). */
const firstLine = (message) =>
  stripAnsi(message ?? '')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0) ?? '(no message)';

/**
 * Pure: the lines for one group from Jest's JSON result. `rootDir` makes file names relative.
 * @param {string} group
 * @param {any} result Jest's --json output
 * @param {string} rootDir
 * @returns {string[]}
 */
function groupLines(group, result, rootDir) {
  const files = result.testResults ?? [];
  const seconds = files.length
    ? Math.round((Math.max(...files.map((f) => f.endTime ?? 0)) - (result.startTime ?? 0)) / 1000)
    : 0;
  if (files.length === 0 && result.success) return [`  ${group.padEnd(17)} no file matched`];
  const failedFiles = files.filter((f) => f.status !== 'passed');
  const counts = `${files.length} files, ${result.numTotalTests} tests`;
  const skipped = result.numPendingTests + (result.numTodoTests ?? 0);
  const skippedNote = skipped > 0 ? `, ${skipped} skipped` : '';
  if (failedFiles.length === 0 && result.numFailedTests === 0 && !result.wasInterrupted)
    return [`  ${group.padEnd(17)} ${counts}: all passed${skippedNote} (${seconds} s)`];
  const lines = [
    `  ${group.padEnd(17)} ${counts}: ${failedFiles.length} files and ${result.numFailedTests} tests FAILED${skippedNote}${result.wasInterrupted ? ', interrupted' : ''} (${seconds} s)`,
  ];
  const failures = failedFiles.flatMap((f) => {
    const file = relative(rootDir, f.name);
    const tests = (f.assertionResults ?? []).filter((a) => a.status === 'failed');
    // A file that failed to run has no failed test, only its message.
    if (tests.length === 0) return [`    FAIL ${file}: ${firstLine(f.message)}`];
    return tests.map((t) => `    FAIL ${file} > ${t.title}: ${firstLine(t.failureMessages?.[0])}`);
  });
  lines.push(...failures.slice(0, MAX_NAMED).map(clip));
  if (failures.length > MAX_NAMED) lines.push(`    ... and ${failures.length - MAX_NAMED} more failed`);
  return lines;
}

/**
 * Pure: the machine's facts as lines.
 * @param {{ load: number[], diskFreeBytes: number, diskTotalBytes: number, memFreeBytes: number, memTotalBytes: number }} m
 */
function machineLines(m) {
  const gb = (b) => `${(b / 2 ** 30).toFixed(1)} GB`;
  return [
    `  load ${m.load.map((l) => l.toFixed(1)).join(' ')}; disk ${gb(m.diskFreeBytes)} free of ${gb(m.diskTotalBytes)}; memory ${gb(m.memFreeBytes)} available of ${gb(m.memTotalBytes)}`,
  ];
}

/** Pure: the stack log's last lines worth reading (the provisioner's per-claim lines left out). */
function stackLogLines(log, count = 8) {
  return log
    .split('\n')
    .filter((l) => l.trim() && !l.includes(' host provisioner: '))
    .slice(-count)
    .map((l) => clip(`  ${l}`));
}

function main(reportDir, stateDir) {
  const rootDir = join(__dirname, '..', '..');
  // The groups in the order they ran (each result's start time): the list of groups lives in run-suite.sh alone.
  const results = (existsSync(reportDir) ? readdirSync(reportDir) : [])
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({
      group: f.slice(0, -'.json'.length),
      result: JSON.parse(readFileSync(join(reportDir, f), 'utf8')),
    }))
    .sort((a, b) => (a.result.startTime ?? 0) - (b.result.startTime ?? 0));
  const lines = ['suite: what each group did'];
  for (const { group, result } of results) lines.push(...groupLines(group, result, rootDir));
  const failed = results.some(({ result }) => !result.success);
  if (failed) {
    lines.push('suite: the machine as the suite ended');
    const disk = statfsSync(stateDir);
    lines.push(
      ...machineLines({
        load: loadavg(),
        diskFreeBytes: disk.bavail * disk.bsize,
        diskTotalBytes: disk.blocks * disk.bsize,
        memFreeBytes: freemem(),
        memTotalBytes: totalmem(),
      }),
    );
    const stackLog = join(stateDir, 'stack.log');
    if (existsSync(stackLog)) {
      lines.push(`suite: the last lines of ${relative(rootDir, stackLog)} (the stack's daemon)`);
      lines.push(...stackLogLines(readFileSync(stackLog, 'utf8')));
    }
  }
  console.log(lines.join('\n'));
}

module.exports = { groupLines, machineLines, stackLogLines };

if (require.main === module) {
  const [reportDir, stateDir] = process.argv.slice(2);
  if (!reportDir || !stateDir) {
    console.error(
      'usage: node test/support/suite-report.js <folder of Jest --json files> <stack state folder>',
    );
    process.exit(2);
  }
  main(reportDir, stateDir);
}
