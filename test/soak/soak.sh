#!/bin/sh
# `npm run soak -- --seed S --minutes M`: runs test/soak/soak.test.ts on the running stack with that seed and length
# (defaults: a random seed, 15 minutes). The seed is printed first, so any run can be repeated.
set -eu
seed=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
minutes=15
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed="$2"; shift 2 ;;
    --minutes) minutes="$2"; shift 2 ;;
    *) echo "usage: npm run soak -- [--seed S] [--minutes M]" >&2; exit 2 ;;
  esac
done
echo "soak: seed $seed, $minutes minutes"
SOAK_SEED="$seed" SOAK_MINUTES="$minutes" NODE_OPTIONS=--experimental-vm-modules \
  exec jest --selectProjects e2e --runInBand --testPathPatterns 'test/soak/soak.test.ts'
