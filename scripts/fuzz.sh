#!/usr/bin/env bash
# Runs every fuzz target in the repo for the given time each (default 30s).
# Seed corpora live in each package's testdata/fuzz/.
#
# The targets run on Go 1.27 (KPROXY_FUZZ_GO, fetched by the go command
# like a module), whatever Go builds the rest: Go 1.26's fuzz coordinator
# can fail a target with a bare "context deadline exceeded" at the end of
# -fuzztime, having found nothing (golang/go#75804, fixed in Go 1.27.0).
# On a loaded CI machine that hit one target twice in a row. A retry stays
# for any such run that still shows up; a run that writes a failing input,
# or fails any other way, fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-30s}
export GOTOOLCHAIN=${KPROXY_FUZZ_GO:-go1.27.3}
go version
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    for attempt in 1 2 3; do
      echo "fuzz $pkg $target for $fuzztime (attempt $attempt)"
      if go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 5s 2>&1 | tee "$out"; then
        break
      fi
      if grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written to' "$out" && [ "$attempt" -lt 3 ]; then
        echo "fuzz $pkg $target: bare 'context deadline exceeded' with no failing input (Go fuzz coordinator race); retrying"
        continue
      fi
      echo "fuzz $pkg $target FAILED" >&2
      exit 1
    done
  done
done
