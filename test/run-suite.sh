#!/bin/sh
# The whole suite against the running local stack (`npm test` brings it up first). The e2e files share one stack,
# each in namespaces of its own, so most run several at a time beside the unit tests; the files that change the
# stack itself (jest.config.js ALONE: operator kills, node faults, stacks of their own) run after, one at a time.
# Last, the fault tests and the real-node files that can share one real-node stack (jest.config.js REAL_NODE_SHARED)
# run on one, those whose faults stay in their own namespace two at a time, then the rest one by one: for the whole suite the default stack is brought up again on real nodes, once, instead of a stack of
# their own per file, and taken down at the end.
# Every group always runs; the exit status is non-zero if any failed.
export NODE_OPTIONS=--experimental-vm-modules
jest=./node_modules/.bin/jest
status=0
# The shared group runs the unit tests (CPU-bound: Temporal dev servers, bundling) beside the e2e files, on 2 cores.
# Jest and everything it starts run at a lower priority than the stack, so the system under test (etcd members, the
# operator, the apiserver) is not starved by the test runner: in CI a write committed 1.2 s late at load 7, and the
# writer's 1 s bound counted the runner's CPU against the operator.
E2E_GROUP=shared nice -n 10 "$jest" --maxWorkers="${E2E_WORKERS:-2}" --passWithNoTests "$@" || status=1
E2E_GROUP=alone "$jest" --selectProjects e2e --maxWorkers=1 --passWithNoTests "$@" || status=1
if [ $# -eq 0 ]; then
  # With a filter the files bring up stacks of their own only if they match; without one, swap the stack. Should the
  # real-node stack not come up, the process-node stack comes back for the fault files (a failure, so the run says
  # so), and each test/realnodes file brings up a stack of its own (test/support/real-node-stack.ts).
  node dist/localcluster/main.js down
  if ! node dist/localcluster/main.js up --real-nodes --claims-in-memory; then
    echo "run-suite: the default stack did not come up on real nodes" >&2
    status=1
    node dist/localcluster/main.js down
    node dist/localcluster/main.js up || status=1
  fi
fi
E2E_GROUP=realnodes-paired "$jest" --selectProjects e2e --maxWorkers=2 --passWithNoTests "$@" || status=1
E2E_GROUP=realnodes-alone "$jest" --selectProjects e2e --maxWorkers=1 --passWithNoTests "$@" || status=1
# The swapped stack is the suite's own: it goes, so the next `npm test` or `npm run up` starts on process nodes again.
[ $# -eq 0 ] && node dist/localcluster/main.js down
exit $status
