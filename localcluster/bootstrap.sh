#!/bin/sh
# Makes a fresh clone runnable with no setup beyond `npm start` / `npm test`: installs the locked dependencies, including the pinned Node.js 24, when they are missing or older than package-lock.json.
set -e
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/node ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: installing the locked dependencies (npm ci)..."
  # npm ci only: it never rewrites package-lock.json, so a fresh clone stays clean. The lock file lists every optional
  # platform package (@swc/core-*, @unrs/resolver-binding-*) so that npm 10 and 11 both accept it as it is.
  if ! npm ci --no-audit --no-fund; then
    echo "bootstrap: npm ci refused package-lock.json (see above). Regenerate it with 'npm install' on npm 11 and commit it; the bootstrap never rewrites it." >&2
    exit 1
  fi
fi
# The browser test (test/browser/) drives Debian's Chromium through playwright-core, which downloads no browser.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing Chromium for the browser test (apt-get install chromium)..."
    apt-get install -y --no-install-recommends chromium >/dev/null || {
      apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium >/dev/null
    } || echo "bootstrap: could not install Chromium; test/browser/ will fail until 'apt-get install chromium' works"
  else
    echo "bootstrap: Chromium is missing; test/browser/ needs it (as root: apt-get install chromium)"
  fi
fi
