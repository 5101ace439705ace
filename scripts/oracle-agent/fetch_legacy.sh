#!/usr/bin/env bash
# Unpack the last pi-coding-agent releases that wrote session format v1 (0.30.2) and v2 (0.32.3)
# into legacy/<version>/ (not committed). Their SessionManager needs only Node built-ins and the
# package's own config.js, so no install is needed.
set -euo pipefail
cd "$(dirname "$0")"
for version in 0.30.2 0.32.3; do
  dir="legacy/$version"
  [ -f "$dir/package/dist/core/session-manager.js" ] && continue
  mkdir -p "$dir"
  (cd "$dir" && npm pack "@mariozechner/pi-coding-agent@$version" --silent >/dev/null && tar xzf ./*.tgz && rm ./*.tgz)
  echo "unpacked $dir"
done
