#!/bin/sh
# `npm test`: the static checks first (format, lint, types including every doc example), then the
# Deno suites, every folder's `mod.ts` example run with its assertions (`deno test --doc`), and the
# Python client's suite, then ONE line naming every skipped test group and why (`skipped: none`
# when nothing was skipped). Exit status: 0 only when everything passed.
set -u
cd "$(dirname "$0")/.."

echo "== static checks: deno fmt --check, deno lint, deno check --doc"
deno fmt --check && deno lint && deno check --doc . || {
  echo "static checks failed (run deno fmt / deno lint / deno check --doc . to see why)"
  exit 1
}

ROLLGATE_SKIP_LOG=$(mktemp)
export ROLLGATE_SKIP_LOG
status=0
echo "== deno test"
deno test -A --parallel || status=1
echo "== doc examples of every mod.ts (deno test --doc)"
deno test -A --doc $(find . -name mod.ts -not -path './node_modules/*' -not -path './agents/*' \
  -not -path './.venv/*' -not -path './.venv-engine/*' -not -path './.venv-trainers/*' \
  -not -path './.cache/*' | sort) || status=1
echo "== Python client (clients/python): standard-library transport, then httpx (the venv has it)"
(cd clients/python && ROLLGATE_CLIENT_TRANSPORT=builtin python3 -m unittest discover) || status=1
(cd clients/python && ../../.venv/bin/python -m unittest discover) || status=1
echo "== trainer adapters (clients/python/adapter_tests): shared mapping, slime, verifiers, TRL in .venv-engine;"
echo "   OpenEnv + TRL and verl in .venv-trainers"
adapter_tests() { # VENV GROUP MODULE...: the modules in that venv, or the group skipped and named
  venv=$1 group=$2
  shift 2
  if [ -x "$venv/bin/python" ]; then
    (cd clients/python/adapter_tests && "../../../$venv/bin/python" -m unittest "$@") || status=1
  else
    printf '{"group":"%s","reason":"%s missing (sh tests/engine/install_%s.sh)"}\n' \
      "$group" "$venv" "$([ "$venv" = .venv-engine ] && echo engine || echo trainers)" >>"$ROLLGATE_SKIP_LOG"
  fi
}
adapter_tests .venv-engine "adapters: mapping, slime, verifiers, TRL" test_chain_rows test_slime test_verifiers test_trl
adapter_tests .venv-trainers "adapters: OpenEnv + TRL, verl" test_openenv test_verl
deno run --allow-read tests/support/report_skips.ts "$ROLLGATE_SKIP_LOG"
rm -f "$ROLLGATE_SKIP_LOG"
exit "$status"
