# shellcheck shell=bash
# Sourced by scripts/release.sh and deploy/image-test.sh: how a kproxy
# binary for release or an image is built, in one place.

# kproxy_build OUT GOOS GOARCH VERSION COMMIT builds cmd/kproxy to OUT:
# static (no cgo), no paths of this machine in it (-trimpath), no DWARF
# (-w), VERSION and COMMIT printed by `kproxy version`. The symbol table
# stays (no -s): -trimpath leaves -ldflags out of the build info, so the
# stamp of a binary that cannot run here is read from the symbol
# main.version (scripts/stamped). Run from the repository root.
kproxy_build() {
  local out=$1 goos=$2 goarch=$3 version=$4 commit=$5
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath \
    -ldflags="-w -X main.version=$version -X main.commit=$commit" \
    -o "$out" ./cmd/kproxy
}
