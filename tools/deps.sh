#!/usr/bin/env bash
# Installs the Debian packages that building, testing and reporting need,
# and only those that are missing, so that a machine that has them all is
# left alone (and needs no network).  chromium renders the HTML report in
# tests/cli_report.sh; man-db renders the manual page in tests/cli_install.sh;
# parallel runs the sharded sweep of tests/cli_distributed.sh; python3-yaml
# parses the CI recipes in tests/cli_ci.sh.  Keep the list in step with
# .ci/run.
set -euo pipefail
pkgs=(gcc make pkg-config libsqlite3-dev sqlite3 libcmocka-dev tzdata python3 python3-croniter python3-tz python3-yaml
      gnuplot-nox chromium man-db parallel)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "simrun: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
