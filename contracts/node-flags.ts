// The Node.js flags the operator process runs with, wherever it runs (the local stack, the image, the chart).

/**
 * Memory over throughput: the operator is mostly idle and waits on Temporal, so a small young generation
 * (1 MB semi-spaces instead of 16) and a capped old generation keep its resident set down at the cost
 * of more frequent, cheap collections. `npm run bench -- fleet` prints what 20 clusters cost with them.
 */
export const OPERATOR_NODE_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=256'] as const;

/**
 * Workflows kept in the worker's cache. The SDK's default derives from the heap limit, which the flags
 * above cap; a fixed figure keeps every cluster's long-running workflow cached (no replay per signal) for
 * fleets of up to about this many clusters plus their in-flight operations.
 */
export const MAX_CACHED_WORKFLOWS = 500;
