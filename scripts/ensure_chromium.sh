#!/usr/bin/env bash
# Debian's Chromium for the browser test (tests/browser): Playwright drives /usr/bin/chromium, it never
# downloads a browser. Installs it with apt-get when missing and running as root; otherwise says so and
# leaves the decision to the test (it skips, or fails when RAG_LAB_REQUIRE_BROWSER is set, as in .ci/run).
set -euo pipefail
chromium=${RAG_LAB_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "ensure_chromium: installing Debian's chromium with apt-get" >&2
  # Wait (bounded) for another apt/dpkg holding the lock instead of failing at once.
  if DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq \
     && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium >/dev/null; then
    exit 0
  fi
  echo "ensure_chromium: apt-get could not install chromium" >&2
else
  echo "ensure_chromium: $chromium is missing (install Debian's chromium package as root to run tests/browser)" >&2
fi
