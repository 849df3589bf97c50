// Build step (`npm run build`): bundles the workflow code once, so the operator loads a prebuilt bundle instead of
// running webpack in-process at every start (which took seconds and left ~100 MB of the bundler's memory behind).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/** Where the operator looks for the bundle: next to the compiled worker/ and workflows/ folders. */
export const WORKFLOW_BUNDLE_PATH = join(__dirname, '..', 'workflow-bundle.js');

export async function writeWorkflowBundle(path = WORKFLOW_BUNDLE_PATH): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows/index'),
    logger: {
      log: () => undefined,
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: console.warn,
      error: console.error,
    },
  });
  writeFileSync(path, code);
  return path;
}

if (require.main === module) {
  writeWorkflowBundle().then(
    (path) => console.log(`workflow bundle: ${path}`),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
