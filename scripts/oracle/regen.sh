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
# streamSimple with both credential kinds on every OpenAI-family API (process env, env keys)
python3 stream_simple/make_cases.py > stream_simple/cases.json
mkdir -p ../../tests/fixtures/pi_ai_stream_simple
node capture.mjs stream_simple/cases.json 2>/dev/null > ../../tests/fixtures/pi_ai_stream_simple/openai_family.json
echo "wrote ../../tests/fixtures/pi_ai_stream_simple/openai_family.json"
