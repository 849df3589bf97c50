/** The suite's closing report (suite-report.js). */
/** One group's lines from Jest's --json result, file names relative to rootDir. */
export declare function groupLines(group: string, result: unknown, rootDir: string): string[];
export declare function machineLines(m: {
  load: number[];
  diskFreeBytes: number;
  diskTotalBytes: number;
  memFreeBytes: number;
  memTotalBytes: number;
}): string[];
/** The stack log's last lines worth reading (the provisioner's per-claim lines left out). */
export declare function stackLogLines(log: string, count?: number): string[];
