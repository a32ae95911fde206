#!/bin/sh
# Installs a venv at the repository root from a full lock with --no-deps, so it is the same on
# every machine and pip never resolves:
#
#   sh tests/engine/install_venv.sh LABEL VENV LOCK [FROM_VENV]
#
# With FROM_VENV, the packages it has at the pinned version are hard-linked from it first
# (link_shared_packages.py): pip finds them installed and downloads only the rest.
#
# Reused when present: a stamp holds the lock's checksum, and a venv whose stamp matches is left
# alone (a second run costs ~0.1 s). A changed lock installs over it.
set -eu
cd "$(dirname "$0")/../.."
label=$1 venv=$2 lock=$3 from=${4:-}
sum=$(cksum "$lock" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.rollgate-lock" 2>/dev/null)" = "$sum" ]; then
  exit 0
fi
start=$(date +%s)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
linked=""
if [ -n "$from" ] && [ -x "$from/bin/python" ]; then
  linked=", $(python3 tests/engine/link_shared_packages.py "$from" "$venv" "$lock") packages linked from $from"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --no-deps -r "$lock"
echo "$sum" >"$venv/.rollgate-lock"
echo "$label: installed in $(($(date +%s) - start)) s$linked ($(du -sh "$venv" | cut -f1))"
