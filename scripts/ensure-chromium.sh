#!/usr/bin/env bash
# Install Debian's Chromium (and a small CJK font, so the browser tests' screenshots
# show the course's Chinese records) when missing. Never downloads a browser of its
# own (no `playwright install`).
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
if command -v fc-list >/dev/null 2>&1 && [ -z "$(fc-list :lang=zh 2>/dev/null | head -n 1)" ]; then
  need+=(fonts-wqy-microhei)
elif ! command -v fc-list >/dev/null 2>&1; then
  need+=(fonts-wqy-microhei)
fi
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages for the browser tests: ${need[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
elif [ ! -x /usr/bin/chromium ]; then
  echo "note: /usr/bin/chromium is missing and cannot be installed here (needs root + apt-get);"
  echo "      the browser tests will be skipped. Install chromium to run them."
fi
