#!/usr/bin/env bash
# Builds a kproxy release into dist/ (emptied first):
#
#   kproxy_VERSION_OS_ARCH.tar.gz     binary + LICENSE, NOTICE, THIRD_PARTY_LICENSES.md, README.md
#                                     (linux and darwin, amd64 and arm64)
#   kproxy_VERSION_OS_ARCH.spdx.json  SPDX 2.3 SBOM of that binary
#   kproxy_VERSION_image.tar          the container image (linux, this machine's arch), OCI archive
#   kproxy-VERSION.tgz                the Helm chart: version, appVersion and default image tag VERSION
#   SHA256SUMS                        sha256sum of every file above
#
#   scripts/release.sh 1.2.0          # a release: a clean tree, tag v1.2.0 (if it exists) at HEAD
#   scripts/release.sh --snapshot     # 0.0.0-snapshot.g<commit> (.dirty with local changes)
#   scripts/release-check.sh dist/    # then check what it built
#
# VERSION is SemVer 2 without build metadata (an image tag cannot hold
# "+"); a leading "v" is dropped. Timestamps (SBOMs, the image, tar
# entries) are the commit's time, or SOURCE_DATE_EPOCH when set, so the
# same commit and toolchain give the same binaries, tarballs and SBOMs
# (the chart and image archives hold their packing time).
#
# Needs (Linux): go, git, podman (Debian: podman, runc), GNU tar and date,
# gzip, sha256sum.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/build.sh
source scripts/lib/build.sh
# shellcheck source=deploy/image-lib.sh
source deploy/image-lib.sh

usage() {
  echo "usage: scripts/release.sh VERSION | --snapshot" >&2
  echo "  VERSION: SemVer 2 without build metadata, e.g. 1.2.0 or 1.3.0-rc.1 (a leading v is dropped)" >&2
  exit 2
}
fail() { echo "release: $*" >&2; exit 1; }

snapshot="" version=""
for arg in "$@"; do
  case $arg in
  --snapshot) snapshot=yes ;;
  -h | --help) usage ;;
  -*) echo "release: unknown flag $arg" >&2; usage ;;
  *) [[ -z $version ]] || usage; version=${arg#v} ;;
  esac
done
if [[ -n $snapshot && -n $version ]] || [[ -z $snapshot && -z $version ]]; then usage; fi

for tool in go git podman tar gzip sha256sum; do
  command -v "$tool" >/dev/null || fail "$tool not found: it is needed to build a release (podman: Debian packages podman and runc)"
done

commit=$(git rev-parse HEAD)
dirty=$(git status --porcelain --untracked-files=no)
if [[ -n $snapshot ]]; then
  version=0.0.0-snapshot.g$(git rev-parse --short=12 HEAD)
  if [[ -n $dirty ]]; then version+=.dirty commit+=-dirty; fi
else
  # SemVer 2 (semver.org's regular expression) without build metadata.
  semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-((0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?$'
  [[ $version =~ $semver ]] || fail "version '$version' is not SemVer 2 without build metadata (e.g. 1.2.0, 1.3.0-rc.1)"
  [[ -z $dirty ]] || fail "the working tree has uncommitted changes (git status): a release is built from a commit; commit them, or build a --snapshot"
  if tagged=$(git rev-parse -q --verify "refs/tags/v$version^{commit}"); then
    [[ $tagged == "$commit" ]] || fail "tag v$version is commit $tagged, not HEAD $commit: check out the tag to rebuild that release"
  fi
fi
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
echo "== release $version (commit $commit, $created)"

dist=$PWD/dist
rm -rf "$dist"
mkdir -p "$dist"
work=$(mktemp -d "${TMPDIR:-/tmp}/kproxy-release.XXXXXX")
image_store "$work/image"
image=localhost/kproxy:$version
cleanup() {
  set +e
  timeout 30 "${podman[@]}" rmi -af >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# The SBOM writer, built once: it reads a binary's build info and the
# licences of the modules it links.
go build -o "$work/sbom" ./scripts/sbom

platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
for platform in "${platforms[@]}"; do
  goos=${platform%/*} goarch=${platform#*/}
  name=kproxy_${version}_${goos}_${goarch}
  echo "== $name"
  mkdir -p "$work/$name"
  kproxy_build "$work/$name/kproxy" "$goos" "$goarch" "$version" "$commit"
  cp LICENSE NOTICE THIRD_PARTY_LICENSES.md README.md "$work/$name/"
  # Reproducible: sorted entries, fixed owner and time, no name or time in
  # the gzip header.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -C "$work" -cf - "$name" | gzip -9n >"$dist/$name.tar.gz"
  "$work/sbom" -binary "$work/$name/kproxy" -version "$version" -name "$name" \
    -created "$created" -o "$dist/$name.spdx.json"
done

image_arch=$(go env GOARCH)
echo "== container image $image (linux/$image_arch)"
image_build_prebuilt "$work/context" "$work/kproxy_${version}_linux_${image_arch}/kproxy" \
  "$image" "$version" "$commit" "$created" --timestamp "$epoch"
timeout 300 "${podman[@]}" save --quiet --format oci-archive -o "$dist/kproxy_${version}_image.tar" "$image"

echo "== Helm chart"
(cd deploy/helm/test && go run ./cmd/package-chart -version "$version" -o "$dist" ../kproxy) >/dev/null

(cd "$dist" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum >"$work/SHA256SUMS")
mv "$work/SHA256SUMS" "$dist/SHA256SUMS"
echo "== dist/ (release $version)"
(cd "$dist" && ls -l --time-style=+ | tail -n +2)
if [[ -z $snapshot ]] && ! git rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
  echo "not tagged yet: after scripts/release-check.sh dist/, git tag -a v$version -m 'kproxy $version' $commit && git push origin v$version"
fi
