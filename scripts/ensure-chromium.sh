#!/usr/bin/env bash
# Install Debian's Chromium for the real-browser tests when it is missing.
# Never downloads a browser of its own (no `playwright install`).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser tests..."
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "note: /usr/bin/chromium is missing and cannot be installed here (needs root + apt-get);"
  echo "      the browser tests will be skipped. Install chromium to run them."
fi
