#!/bin/sh
# Installs the trainers whose packages cannot share `.venv-engine` into `.venv-trainers` at the
# repository root, every package pinned by trainers.lock: OpenEnv 0.10.0 (it imports fastmcp, which
# needs mcp<2, while vLLM and verifiers need mcp>=2), verl 0.9.1 (transformers<5.11, vLLM's build
# here has 5.19) and TRL 1.16.0 (its HarnessRolloutWorker consumes OpenEnv's TrainingTrace), on
# the engine venv's torch 2.13.0. The Python client's adapter tests run in it (tests/run_all.sh).
#
# Packages `.venv-engine` has at the pinned version (torch, its nvidia-* and triton wheels: 4.5 of
# the venv's 5.8 GB) are hard-linked from it (link_shared_packages.py) instead of downloaded; pip
# installs the rest with --no-deps. Run after install_engine.sh. Reused when present
# (install_venv.sh: a stamp holds the lock's checksum).
#
# ROLLGATE_TRAINERS=off skips the install (the adapter tests that need it are then skipped and
# named so on the summary line).
set -eu
cd "$(dirname "$0")/../.."
if [ "${ROLLGATE_TRAINERS:-}" = off ]; then
  echo "trainer venv: skipped (ROLLGATE_TRAINERS=off)"
  exit 0
fi
exec sh tests/engine/install_venv.sh "trainer venv" .venv-trainers tests/engine/trainers.lock .venv-engine
