#!/bin/sh
# Installs the trainers whose packages cannot share `.venv-engine` into `.venv-trainers` at the
# repository root, every package pinned by trainers.lock: OpenEnv 0.10.0 (it imports fastmcp, which
# needs mcp<2, while vLLM and verifiers need mcp>=2), verl 0.9.1 (transformers<5.11, vLLM's build
# here has 5.19) and TRL 1.16.0 (its HarnessRolloutWorker consumes OpenEnv's TrainingTrace), on
# the engine venv's torch 2.13.0. The Python client's adapter tests run in it (tests/run_all.sh).
#
# Packages `.venv-engine` has at the pinned version (torch, its nvidia-* and triton wheels: 4.5 of
# the venv's 5.8 GB) are hard-linked from it (link_shared_packages.py) instead of downloaded; pip
# installs the rest with --no-deps. Run after install_engine.sh. Reused when present: a stamp holds
# the lock's checksum, and a venv whose stamp matches is left alone.
#
# ROLLGATE_TRAINERS=off skips the install (the adapter tests that need it are then skipped and
# named so on the summary line).
set -eu
cd "$(dirname "$0")/../.."
if [ "${ROLLGATE_TRAINERS:-}" = off ]; then
  echo "trainer venv: skipped (ROLLGATE_TRAINERS=off)"
  exit 0
fi
lock=tests/engine/trainers.lock
venv=.venv-trainers
sum=$(cksum "$lock" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.rollgate-lock" 2>/dev/null)" = "$sum" ]; then
  exit 0
fi
start=$(date +%s)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
linked=0
if [ -x .venv-engine/bin/python ]; then
  linked=$(python3 tests/engine/link_shared_packages.py .venv-engine "$venv" "$lock")
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --no-deps -r "$lock"
echo "$sum" >"$venv/.rollgate-lock"
echo "trainer venv: installed in $(($(date +%s) - start)) s, $linked packages linked from .venv-engine ($(du -sh "$venv" | cut -f1))"
