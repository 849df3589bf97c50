// Entry of the etcd-conductor image (`etcd-conductor snapshot|restore|restore-point|verify`, and the long-running `archive`): runs one command, writes its one-line result to the termination log, prints a human line, and is the only agent file that exits the process (0 on success, 1 on failure).
import { AgentError, describe } from './agent-error';
import { runArchive } from './archive';
import { ARCHIVE_USAGE, parseArchiveArgs } from './archive-args';
import { DEFAULT_RESULT_FILE, parseAgentArgs, resultFileOf, USAGE } from './args';
import { restoreSnapshot } from './restore';
import { parseRestorePointArgs, restoreToPoint } from './restore-point';
import { AgentFailureReasons, encodeAgentResult, type AgentResult } from '../contracts/agent-result';
import { writeResultFile } from './result-file';
import { takeSnapshot } from './snapshot';
import { verifySnapshot } from './verify';

function humanLine(command: string, result: AgentResult): string {
  if (!result.ok) return `${command} failed: ${result.reason}: ${result.message}`;
  if ('verification' in result) {
    const v = result.verification;
    return `verify done: ${v.size} bytes, sha256 ${v.sha256}, revision ${v.revision}, ${v.keys} keys, hashkv ${v.hash} at revision ${v.hashRevision} (compacted at ${v.compactRevision})`;
  }
  if ('artifact' in result) {
    const a = result.artifact;
    return `snapshot stored ${a.uri}: ${a.size} bytes, sha256 ${a.sha256}, revision ${a.revision}, etcd ${a.etcdVersion}, taken at ${a.takenAt}`;
  }
  if (!result.restored) return 'restore skipped: the data dir already holds a member';
  const at = result.revision !== undefined ? `, at revision ${result.revision}` : '';
  const leases =
    result.leasesGranted !== undefined
      ? `, ${result.leasesGranted} leases granted, ${result.keysWithoutLease ?? 0} keys without their lease`
      : '';
  return `restore done: ${result.size} bytes, sha256 ${result.sha256}${at}${leases}`;
}

async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? '';
  let resultFile = resultFileOf(argv);
  // SIGTERM (Job deadline, Pod deletion) stops the transfer through the normal failure path: upload aborted, temp files removed, result written.
  const stop = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => stop.abort(sig));

  let result: AgentResult;
  try {
    const args = command === 'restore-point' ? parseRestorePointArgs(argv.slice(1)) : parseAgentArgs(argv);
    resultFile = args.resultFile;
    result =
      args.command === 'restore-point'
        ? await restoreToPoint(args, process.env, stop.signal)
        : args.command === 'snapshot'
          ? await takeSnapshot(args, process.env, stop.signal)
          : args.command === 'verify'
            ? await verifySnapshot(args, process.env, stop.signal)
            : await restoreSnapshot(args, process.env, stop.signal);
  } catch (e) {
    if (e instanceof AgentError) {
      result = { ok: false, reason: e.reason, message: e.message };
      if (e.reason === AgentFailureReasons.InvalidArguments) console.error(USAGE);
    } else {
      // A bug, not a classified failure: keep the stack on stderr, still hand the control side a parsable result.
      console.error(e);
      result = {
        ok: false,
        reason: AgentFailureReasons.DestinationUnavailable,
        message: `unexpected error: ${describe(e)}`,
      };
    }
  }

  let line: string;
  try {
    line = encodeAgentResult(result);
  } catch (e) {
    result = { ok: false, reason: AgentFailureReasons.InvalidArguments, message: describe(e) };
    line = encodeAgentResult(result);
  }
  try {
    writeResultFile(resultFile, line, resultFile !== DEFAULT_RESULT_FILE);
  } catch (e) {
    console.error(`could not write the result to ${resultFile}: ${describe(e)}; the result was: ${line}`);
  }
  console.log(humanLine(command || 'etcd-conductor', result));
  return result.ok ? 0 : 1;
}

/** The continuous backup runs until stopped and reports through its log and the store, not a result line. */
async function archive(argv: string[]): Promise<number> {
  const stop = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => stop.abort(sig));
  try {
    await runArchive(parseArchiveArgs(argv.slice(1)), process.env, stop.signal);
    return 0;
  } catch (e) {
    console.error(`archive failed: ${e instanceof AgentError ? `${e.reason}: ${e.message}` : describe(e)}`);
    if (e instanceof AgentError && e.reason === AgentFailureReasons.InvalidArguments)
      console.error(ARCHIVE_USAGE);
    return 1;
  }
}

(process.argv[2] === 'archive' ? archive(process.argv.slice(2)) : main(process.argv.slice(2))).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
