// The soak as CI runs it: a fixed seed for 5 minutes on the default stack (container faults, node stops and
// partitions). `npm run soak -- --seed S --minutes M` runs the same file with SOAK_SEED and SOAK_MINUTES. It asserts
// no invariant was broken; the summary table and, on a violation, the seed and the timeline are in the output.
import { runSoak } from './run-soak';

/** The seed CI runs; any seed must pass. */
const CI_SEED = 1515;
const seed = Number(process.env.SOAK_SEED ?? CI_SEED);
const minutes = Number(process.env.SOAK_MINUTES ?? 5);
if (!Number.isInteger(seed) || !(minutes > 0)) {
  throw new Error(
    `SOAK_SEED must be an integer and SOAK_MINUTES above 0 (got ${process.env.SOAK_SEED}, ${process.env.SOAK_MINUTES})`,
  );
}

// The last action may start just before the time is up and take its own bound (at most 10 min), then the final
// read-back and the linearizability check (at most 10 min each).
jest.setTimeout((minutes + 45) * 60_000);

test(`the soak (seed ${seed}, ${minutes} min): spec changes and faults under the writer and linearizability clients break no invariant`, async () => {
  const result = await runSoak({ seed, minutes });
  expect(result.steps.length).toBeGreaterThan(0);
  expect(result.final.acknowledged).toBeGreaterThan(0);
  expect(result.linearizability.operations).toBeGreaterThan(0);
  expect(result.violations).toEqual([]);
});
