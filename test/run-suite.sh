#!/bin/sh
# The whole suite on the local stack. Without arguments (`npm test`) it brings the stack up on real nodes (kubelet,
# containerd and runc per node, CNI, kube-proxy, CoreDNS; member volumes in memory) with the operator installed by its
# Helm chart as users run it (two replicas of the image built here; issue 14), runs every group on that one stack and
# takes it down at the end. With arguments (Jest's: a path pattern, say) it runs them against the stack already up and
# leaves it up. OPERATOR=process runs the operator as a host process instead (quicker to debug: its log is a file).
# The e2e files share the stack, each in namespaces of its own, so most run two at a time after the unit tests
# (E2E_GROUP=shared); the files that change the stack itself (jest.config.js ALONE: operator kills, stacks of their
# own, an upgrade with TLS and auth) run after, one at a time; then those held to the planned-change write-gap bound
# through rolling TLS or a scale from 1 (PAIRED_PLANNED: the TLS files, describe-step, lifecycle), two at a time with nothing else; then the fault files whose faults stay in
# their own namespace (a full volume included) two at a time (realnodes-paired), then those that stop or cut off a
# node or kill the operator one by one (realnodes-alone). Every group always runs; the exit status is non-zero if any failed.
export NODE_OPTIONS=--experimental-vm-modules
jest=./node_modules/.bin/jest
status=0
# Each group's Jest run also writes its result as JSON here; the suite ends with a short report read from them
# (test/support/suite-report.js), so a failure in any group is named in the last lines of the output.
report_dir=.local/test-output/suite
rm -rf "$report_dir" && mkdir -p "$report_dir"
report() { echo "--json --outputFile=$report_dir/$1.json"; }
up_pid=
up_log="${TMPDIR:-/tmp}/etcd-conductor-up.$$.log"
if [ $# -eq 0 ]; then
  # The stack comes up while the type check and the unit tests run (neither needs it): most of `up`'s ~100 s is
  # waiting on kubelets, image imports and the chart's rollout. Its output is printed once it is done.
  node dist/localcluster/main.js up --claims-in-memory --operator="${OPERATOR:-chart}" >"$up_log" 2>&1 &
  up_pid=$!
fi
# The type check and the unit tests (CPU-bound: Temporal dev servers, bundling) run at a lower priority than the stack
# coming up beside them, and on their own before the e2e files: beside the shared e2e files on a real-node stack they
# pushed the 2-core machine to a load of 12, the writer's own process stalled up to 1.8 s, and a planned scale missed
# its 1 s write-gap bound by 20 ms. The e2e files run at the stack's priority: the writer in them is the client whose
# experience the bounds measure, and at nice 10 beside a busy stack it was the one starved (Session 21's first CI run:
# the writer's process stalled 946 ms and its writes timed out on answers that sat unread).
# The unit tests start etcd, Temporal dev servers and MinIO, and render the chart with Helm, from the tool cache. On a
# new machine `up` builds those first and then Kubernetes and the nodes' tools for tens of minutes, so the unit tests
# wait for the host tools only (built once, by whichever of the two takes a tool's lock first; a warm cache only stats
# files). Without this wait, on a new machine (Session 28's rehearsal N) 23 unit files failed on missing binaries.
if [ $# -eq 0 ]; then
  node dist/localcluster/main.js tools host || status=1
fi
# The type check runs beside the unit tests (~15 s of CPU; ~30 s on its own before them).
tsc_pid=
if [ $# -eq 0 ]; then
  nice -n 10 ./node_modules/.bin/tsc -p tsconfig.json --noEmit &
  tsc_pid=$!
fi
# Four at a time: the unit files mostly wait (Temporal's test servers, timers), so four kept the machine ~1.3 cores busy
# and took 119 s on their own, against 148 s with three and ~250 s with two.
nice -n 10 "$jest" --selectProjects unit --maxWorkers="${UNIT_WORKERS:-4}" --passWithNoTests $(report unit) "$@" || status=1
if [ -n "$tsc_pid" ]; then wait "$tsc_pid" || status=1; fi
if [ -n "$up_pid" ]; then
  wait "$up_pid"
  up_status=$?
  cat "$up_log"
  rm -f "$up_log"
  if [ "$up_status" -ne 0 ]; then
    echo "run-suite: the stack did not come up; no e2e file ran" >&2
    node dist/localcluster/main.js down
    exit 1
  fi
fi
E2E_GROUP=shared "$jest" --selectProjects e2e --maxWorkers="${E2E_WORKERS:-2}" --passWithNoTests $(report shared) "$@" || status=1
E2E_GROUP=alone "$jest" --selectProjects e2e --maxWorkers=1 --passWithNoTests $(report alone) "$@" || status=1
E2E_GROUP=planned "$jest" --selectProjects e2e --maxWorkers=2 --passWithNoTests $(report planned) "$@" || status=1
E2E_GROUP=realnodes-paired "$jest" --selectProjects e2e --maxWorkers=2 --passWithNoTests $(report realnodes-paired) "$@" || status=1
E2E_GROUP=realnodes-alone "$jest" --selectProjects e2e --maxWorkers=1 --passWithNoTests $(report realnodes-alone) "$@" || status=1
node test/support/suite-report.js "$report_dir" .local
# On a failure, whether the stack was still whole when the suite ended (before it is taken down).
[ "$status" -ne 0 ] && node dist/localcluster/main.js status 2>&1 | head -n 1
# The stack this script brought up is the suite's own: the whole suite takes it down (with arguments, it stays for the
# next run by hand).
[ $# -eq 0 ] && node dist/localcluster/main.js down
exit $status
