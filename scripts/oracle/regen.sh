#!/usr/bin/env bash
# Regenerate every pi-ai conformance fixture from scripts/oracle/cases/*.json.
set -euo pipefail
cd "$(dirname "$0")"
out=../../tests/fixtures/pi_ai
mkdir -p "$out"
for cases in cases/*.json; do
  name=$(basename "$cases")
  node capture.mjs "$cases" 2>/dev/null > "$out/$name"
  echo "wrote $out/$name"
done
