#!/usr/bin/env bash
# Install a CJK font when the machine has none, so the course's charts (both editions) and the
# browser tests draw Chinese: Debian's fonts-wqy-microhei (WenQuanYi Micro Hei, 5 MB), which
# memorylib/notebook/common.py registers with matplotlib at set-up (no font-cache rebuild).
# Needs root and apt-get; elsewhere it says what to install and changes nothing.
set -euo pipefail
if command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list :lang=zh 2>/dev/null | head -n 1)" ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing a CJK font for the charts: fonts-wqy-microhei"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-microhei fontconfig >/dev/null
else
  echo "note: no CJK font found, and this script installs one only as root with apt-get."
  echo "      Chinese text in charts needs one: fonts-wqy-microhei or fonts-noto-cjk (Debian/Ubuntu);"
  echo "      macOS and Windows carry PingFang SC / Microsoft YaHei, which the charts also use."
fi
