#!/usr/bin/env bash
# Builds SeaweedFS's `weed` (the S3 server internal/testkit/seaweed runs)
# once per version into a cache and prints the binary's path:
#   export KPROXY_WEED_BIN=$(test/seaweedfs/build.sh)
# With --path it only prints where the binary is (or will be).
# `go install …/weed@VERSION` refuses the module (its go.mod has replace
# directives), so the module is downloaded and built inside its own source
# tree, copied to a writable temporary directory.
set -euo pipefail

version=v0.0.0-20261109003541-7506e5f91cd6
module=github.com/seaweedfs/seaweedfs
bin=${KPROXY_WEED_CACHE:-$HOME/.cache/kproxy-weed}/$version/weed
if [[ ${1:-} == --path ]]; then
  echo "$bin"
  exit 0
fi

if [[ ! -x $bin ]]; then
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
  # Outside any module, so that the download touches no go.mod.
  (cd "$work" && GOFLAGS=-mod=mod go mod download "$module@$version") >&2
  src=$(go env GOMODCACHE)/$module@$version # the path is all lower case: no escaping
  cp -r "$src" "$work/src"
  chmod -R u+w "$work/src"
  mkdir -p "$(dirname "$bin")"
  (cd "$work/src" && GOFLAGS=-mod=mod go build -o "$bin.tmp" ./weed) >&2
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
