#!/bin/sh
# Makes a fresh clone runnable with no setup beyond `npm start` / `npm test`: installs the locked dependencies, including the pinned Node.js 24, when they are missing or older than package-lock.json.
set -e
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/node ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: installing the locked dependencies (npm ci)..."
  npm ci --no-audit --no-fund
fi
