#!/usr/bin/env bash
# Checks a release that scripts/release.sh wrote, as a user would take it:
#
#   scripts/release-check.sh dist/
#
# - SHA256SUMS verifies and names every file;
# - each tarball holds exactly the binary, LICENSE, NOTICE,
#   THIRD_PARTY_LICENSES.md and README.md (the last four as in this tree);
# - the binary for this machine runs `kproxy version` and prints the
#   version; the others' build info (go version -m) has their GOOS/GOARCH,
#   no cgo, -trimpath and the version stamped;
# - each SBOM is SPDX 2.3 JSON describing its binary (same SHA-256) and
#   lists the Go toolchain and github.com/twmb/franz-go/pkg/kmsg at the
#   version go.mod has, every package with a licence;
# - the image loads, its labels carry the version, commit and creation time,
#   its /kproxy is the linux tarball's binary and prints the version
#   (in a container, or unpacked where containers cannot run);
# - the Helm chart's version and appVersion are the version, and it renders
#   (Helm's Go SDK) with the version as the image tag.
#
# KPROXY_IMAGE_RUN=unpacked runs the image's binary unpacked even where
# containers run (as deploy/image-test.sh).
#
# Needs: go, podman (Debian: podman, runc), python3, tar, sha256sum.
set -euo pipefail
[[ $# -eq 1 && -d $1 ]] || { echo "usage: scripts/release-check.sh DIST_DIR" >&2; exit 2; }
dist=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
# shellcheck source=deploy/image-lib.sh
source deploy/image-lib.sh

fail() { echo "release-check: FAIL: $*" >&2; exit 1; }
ok() { echo "ok    $*"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/kproxy-release-check.XXXXXX")
image_store "$work/image"
cleanup() {
  set +e
  timeout 30 "${podman[@]}" rmi -af >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# The version, from the one linux/amd64 tarball's name.
shopt -s nullglob
tarballs=("$dist"/kproxy_*_linux_amd64.tar.gz)
((${#tarballs[@]} == 1)) || fail "$dist: want one kproxy_VERSION_linux_amd64.tar.gz, found ${#tarballs[@]}"
version=$(basename "${tarballs[0]}" _linux_amd64.tar.gz) version=${version#kproxy_}
echo "== release $version in $dist"

go build -o "$work/stamped" ./scripts/stamped # reads a binary's -X stamp without running it

echo "== checksums"
[[ -f $dist/SHA256SUMS ]] || fail "no SHA256SUMS"
(cd "$dist" && sha256sum --strict --quiet -c SHA256SUMS) || fail "SHA256SUMS does not verify"
listed=$(awk '{print $2}' "$dist/SHA256SUMS" | sed 's/^\*//' | LC_ALL=C sort)
present=$(cd "$dist" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort)
[[ $listed == "$present" ]] ||
  fail "SHA256SUMS does not list: $(comm -13 <(echo "$listed") <(echo "$present") | tr '\n' ' '); lists, missing: $(comm -23 <(echo "$listed") <(echo "$present") | tr '\n' ' ')"
ok "SHA256SUMS verifies $(wc -l <<<"$listed") files, every file in $dist"

host=$(go env GOOS)/$(go env GOARCH)
image_arch=""
for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  goos=${platform%/*} goarch=${platform#*/}
  name=kproxy_${version}_${goos}_${goarch}
  echo "== $name"
  tarball=$dist/$name.tar.gz
  [[ -f $tarball ]] || fail "no $name.tar.gz"
  want=$(printf '%s\n' "$name/" "$name/"{LICENSE,NOTICE,README.md,THIRD_PARTY_LICENSES.md,kproxy} | LC_ALL=C sort)
  got=$(tar -tzf "$tarball" | LC_ALL=C sort)
  [[ $got == "$want" ]] || fail "$name.tar.gz holds:"$'\n'"$got"$'\n'"want:"$'\n'"$want"
  tar -xzf "$tarball" -C "$work"
  for f in LICENSE NOTICE README.md THIRD_PARTY_LICENSES.md; do
    cmp -s "$f" "$work/$name/$f" || fail "$name.tar.gz: $f differs from this tree's"
  done
  bin=$work/$name/kproxy
  [[ -x $bin ]] || fail "$name.tar.gz: kproxy is not executable"
  ok "$name.tar.gz holds kproxy, LICENSE, NOTICE, README.md, THIRD_PARTY_LICENSES.md"

  info=$(go version -m "$bin") || fail "$name: go version -m cannot read the build info"
  for setting in "GOOS=$goos" "GOARCH=$goarch" "CGO_ENABLED=0" "-trimpath=true"; do
    grep -qE "^\s+build\s+$setting\$" <<<"$info" || fail "$name: build info has no $setting:"$'\n'"$info"
  done
  # -trimpath keeps -ldflags out of the build info: the stamp is read
  # from the symbol table.
  stamped=$("$work/stamped" "$bin" main.version 2>&1) || fail "$name: $stamped"
  [[ $stamped == "$version" ]] || fail "$name: main.version is stamped '$stamped', want $version"
  stamped_commit=$("$work/stamped" "$bin" main.commit 2>&1) || fail "$name: $stamped_commit"
  first_commit=${first_commit:-$stamped_commit}
  [[ $stamped_commit == "$first_commit" ]] || fail "$name: main.commit is stamped $stamped_commit, another binary's $first_commit"
  ok "$name: build info GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 -trimpath; stamped main.version=$version main.commit=$stamped_commit"
  if [[ $platform == "$host" ]]; then
    out=$("$bin" version) || fail "$name: kproxy version failed: $out"
    grep -qx "version $version" <<<"$out" || fail "$name: kproxy version prints:"$'\n'"$out"$'\n'"want the line: version $version"
    commit=$(awk '$1 == "commit" {print $2}' <<<"$out")
    [[ $commit == "$stamped_commit" ]] || fail "$name: kproxy version prints commit $commit, main.commit is stamped $stamped_commit"
    ok "$name: kproxy version prints version $version, commit $commit"
  fi
  if [[ $goos == linux && $goarch == $(go env GOARCH) ]]; then image_arch=$goarch; fi
done
[[ -n ${commit:-} ]] || fail "no binary for this machine ($host) to run"

echo "== SBOMs"
kmsg=$(go list -m -f '{{.Version}}' github.com/twmb/franz-go/pkg/kmsg)
for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  name=kproxy_${version}_${platform%/*}_${platform#*/}
  sbom=$dist/$name.spdx.json
  [[ -f $sbom ]] || fail "no $name.spdx.json"
  gover=$(go version "$work/$name/kproxy" | awk '{print $2}')
  python3 - "$sbom" "$version" "$(sha256sum <"$work/$name/kproxy" | cut -d' ' -f1)" "$kmsg" "$gover" <<'EOF' || fail "$name.spdx.json"
import json, sys
path, version, binsum, kmsg, gover = sys.argv[1:]
def die(msg):
    print(f"{path}: {msg}", file=sys.stderr)
    sys.exit(1)
try:
    doc = json.load(open(path))
except ValueError as e:
    die(f"not JSON: {e}")
for key, want in [("spdxVersion", "SPDX-2.3"), ("dataLicense", "CC0-1.0"), ("SPDXID", "SPDXRef-DOCUMENT")]:
    if doc.get(key) != want:
        die(f"{key} is {doc.get(key)!r}, want {want!r}")
for key in ["name", "documentNamespace"]:
    if not doc.get(key):
        die(f"no {key}")
if not doc.get("creationInfo", {}).get("created") or not doc["creationInfo"].get("creators"):
    die("creationInfo lacks created or creators")
pkgs = {p["SPDXID"]: p for p in doc.get("packages", [])}
for p in pkgs.values():
    for key in ["name", "downloadLocation", "licenseConcluded", "copyrightText"]:
        if key not in p:
            die(f"package {p.get('SPDXID')} has no {key}")
    if p["licenseConcluded"] in ("", "NOASSERTION", "NONE"):
        die(f"package {p['name']} has no licence: {p['licenseConcluded']!r}")
described = [r["relatedSpdxElement"] for r in doc.get("relationships", [])
             if r["spdxElementId"] == "SPDXRef-DOCUMENT" and r["relationshipType"] == "DESCRIBES"]
if len(described) != 1 or described[0] not in pkgs:
    die(f"describes {described}, want the binary's package")
main = pkgs[described[0]]
sums = {c["algorithm"]: c["checksumValue"] for c in main.get("checksums", [])}
if main.get("versionInfo") != version or sums.get("SHA256") != binsum:
    die(f"describes {main['name']} {main.get('versionInfo')} SHA256 {sums.get('SHA256')}, want version {version} SHA256 {binsum} (the tarball's binary)")
by_name = {p["name"]: p for p in pkgs.values()}
k = by_name.get("github.com/twmb/franz-go/pkg/kmsg")
if k is None or k.get("versionInfo") != kmsg:
    die(f"github.com/twmb/franz-go/pkg/kmsg is {k and k.get('versionInfo')}, want {kmsg} (go.mod)")
if not any(c["algorithm"] == "SHA256" and len(c["checksumValue"]) == 64 for c in k.get("checksums", [])):
    die(f"github.com/twmb/franz-go/pkg/kmsg has no SHA256 checksum: {k.get('checksums')}")
if by_name.get("go", {}).get("versionInfo") != gover:
    die(f"Go toolchain {by_name.get('go', {}).get('versionInfo')}, want {gover} (go version of the binary)")
linked = {r["relatedSpdxElement"] for r in doc.get("relationships", []) if r["spdxElementId"] == main["SPDXID"]}
if linked != set(pkgs) - {main["SPDXID"]}:
    die(f"the binary is related to {len(linked)} of the {len(pkgs) - 1} other packages")
print(f"ok    {path.rsplit('/', 1)[-1]}: SPDX 2.3, {len(pkgs)} packages, binary {version} SHA256 {binsum[:12]}…, kmsg {kmsg}, {gover}")
EOF
done

echo "== container image"
archive=$dist/kproxy_${version}_image.tar
[[ -f $archive ]] || fail "no kproxy_${version}_image.tar"
[[ -n $image_arch ]] || fail "no linux binary for this machine's arch to compare the image's with"
loaded=$(timeout 300 "${podman[@]}" load -q -i "$archive") || fail "podman load $archive: $loaded"
image=$(sed -n 's/^Loaded image[^:]*: *//p' <<<"$loaded" | head -1)
[[ -n $image ]] || fail "podman load named no image: $loaded"
label() { "${podman[@]}" image inspect --format "{{index .Config.Labels \"org.opencontainers.image.$1\"}}" "$image"; }
[[ $(label version) == "$version" ]] || fail "$image: label org.opencontainers.image.version is '$(label version)', want $version"
[[ $(label revision) == "$commit" ]] || fail "$image: label org.opencontainers.image.revision is '$(label revision)', want $commit (kproxy version's commit)"
[[ $(label created) =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]] || fail "$image: label org.opencontainers.image.created is '$(label created)', want an RFC 3339 UTC time"
ok "$image: labels version $version, revision $commit, created $(label created)"
root=$(timeout 60 "${podman[@]}" image mount "$image")
in_image=$(sha256sum <"$root/kproxy" | cut -d' ' -f1)
timeout 30 "${podman[@]}" image unmount "$image" >/dev/null
released=$(sha256sum <"$work/kproxy_${version}_linux_${image_arch}/kproxy" | cut -d' ' -f1)
[[ $in_image == "$released" ]] || fail "$image: /kproxy has SHA-256 $in_image, the linux/$image_arch tarball's $released"
ok "$image: /kproxy is the linux/$image_arch tarball's binary"
image_runtime "$image" version
out=$(image_run "$image" version) || fail "$image: kproxy version failed ($image_ran): $out"
grep -qx "version $version" <<<"$out" || fail "$image: kproxy version ($image_ran) prints:"$'\n'"$out"$'\n'"want the line: version $version"
ok "$image: kproxy version prints version $version (ran as: $image_ran)"

echo "== Helm chart"
chart=$dist/kproxy-$version.tgz
[[ -f $chart ]] || fail "no kproxy-$version.tgz"
out=$(cd deploy/helm/test && KPROXY_RELEASE_CHART=$chart KPROXY_RELEASE_VERSION=$version \
  go test -count=1 -v -run '^TestReleasedChart$' . 2>&1) || fail "kproxy-$version.tgz:"$'\n'"$out"
grep -q -- '--- PASS: TestReleasedChart' <<<"$out" || fail "TestReleasedChart did not pass:"$'\n'"$out"
grep 'mode: kproxy image' <<<"$out" | sed 's/^ */ok    chart: /'
ok "kproxy-$version.tgz: version and appVersion $version; renders with image tag $version"

echo "== release $version: every check passed"
