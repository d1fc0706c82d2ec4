#!/usr/bin/env bash
# Debian's headless Chromium and its driver, which the browser tests drive (tests/reports/
# test_viewer_browser.py); installed once, as root (sudo otherwise), and skipped when present.
# Mostly download and unpacking: .ci/run starts it beside the fast suite.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
