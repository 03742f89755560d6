#!/usr/bin/env bash
# Runs the Python client's tests from `mvn verify` (cluster-config's integration-test phase) against
# real node processes started from that build's classes: TARGET is cluster-config/target.
# Without python3, numpy, safetensors and pytest it says so and passes, unless CI=true (which also
# needs torch, and transformers, trl and datasets for tensorcache.trl).
set -euo pipefail
target="$1"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
missing=""
if ! command -v python3 >/dev/null; then
  missing="python3"
else
  # torch is optional for the client; its adapters' tests skip without it, except on CI
  required="numpy safetensors pytest"
  [[ "${CI:-}" == "true" ]] && required="$required torch transformers trl datasets"
  for m in $required; do
    python3 -c "import $m" 2>/dev/null || missing="$missing $m"
  done
fi
if [[ -n "$missing" ]]; then
  echo "python client tests SKIPPED: missing$missing (pip install numpy safetensors pytest)"
  [[ "${CI:-}" == "true" ]] && { echo "CI: the python client tests must run" >&2; exit 1; }
  exit 0
fi
export TENSORCACHE_CLASSPATH="$target/classes:$target/lib/*"
exec python3 -m pytest -q -rs -p no:cacheprovider --junitxml="$target/python-client-tests.xml" \
  python/tests
