#!/usr/bin/env bash
# Runs every fuzz target in the repo for the given time each (default 30s).
# Seed corpora live in each package's testdata/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-30s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $target for $fuzztime"
    go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime"
  done
done
