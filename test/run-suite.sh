#!/bin/sh
# The whole suite against the running local stack (`npm test` brings it up first). The e2e files share one stack,
# each in namespaces of its own, so most run several at a time beside the unit tests; the files that change the
# stack itself (jest.config.js ALONE: operator kills, node faults, stacks of their own) run after, one at a time.
# Both groups always run; the exit status is non-zero if either failed.
export NODE_OPTIONS=--experimental-vm-modules
jest=./node_modules/.bin/jest
status=0
E2E_GROUP=shared "$jest" --maxWorkers="${E2E_WORKERS:-2}" --passWithNoTests "$@" || status=1
E2E_GROUP=alone "$jest" --selectProjects e2e --maxWorkers=1 --passWithNoTests "$@" || status=1
exit $status
