#!/usr/bin/env bash
# Builds kproxy's container image from the Dockerfile with podman (vfs
# storage, no daemon), runs it against configs/demo.yaml (its default
# command), does a kcat round trip through it and prints the image's size,
# user and entrypoint.
#
# No base image can be pulled here, so the binary is built on the host and
# handed in as the Dockerfile's `build` stage (--build-context build=DIR);
# the final stage is the same FROM scratch a `docker build` produces.
#
# The image runs as a container (podman run --network host, read-only,
# all capabilities dropped) where the machine allows; where it does not,
# its filesystem is unpacked (podman image mount) and its entrypoint run in
# it with chroot as the image's configured user.
#
#   bash deploy/image-test.sh              # container if possible, else unpacked
#   KPROXY_IMAGE_RUN=unpacked bash deploy/image-test.sh   # force the fallback
#   KPROXY_IMAGE_BUILD=toolchain bash deploy/image-test.sh
#       # the Dockerfile's own `build` stage (what `docker build` runs), on a
#       # stand-in golang image made from this machine's Go toolchain and
#       # busybox-static: slower (a cold build in the container), so not CI's
#       # default; needs containers to run and the Go module proxy
#
# Needs: go, podman (Debian: podman, runc), kcat, curl. Runs as root. Uses
# ports 9092, 9100-9103 and 9644 on 127.0.0.1 (configs/demo.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib/build.sh
source scripts/lib/build.sh
# shellcheck source=deploy/image-lib.sh
source deploy/image-lib.sh

mode=${KPROXY_IMAGE_RUN:-auto}   # auto | container | unpacked
build=${KPROXY_IMAGE_BUILD:-prebuilt} # prebuilt | toolchain
image=localhost/kproxy:ci
work=$(mktemp -d "${TMPDIR:-/tmp}/kproxy-image.XXXXXX")
image_store "$work"
container="" mounted="" pid=""

cleanup() {
  set +e
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [[ -n $container ]] && timeout 30 "${podman[@]}" rm -f -t 2 "$container" >/dev/null 2>&1
  [[ -n $mounted ]] && timeout 30 "${podman[@]}" image unmount "$image" >/dev/null 2>&1
  timeout 30 "${podman[@]}" rmi -af >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
if [[ $build == prebuilt ]]; then
  echo "== image: static binary"
  kproxy_build "$work/kproxy" linux "$(go env GOARCH)" "$version" "$commit"
  echo "== image: podman build (vfs), the build stage replaced by the host's binary"
  image_build_prebuilt "$work/prebuilt" "$work/kproxy" "$image" "$version" "$commit" "$created"
else
  echo "== image: stand-in golang image from this machine's toolchain"
  # Laid out as the official golang image: Go in /usr/local/go, GOPATH
  # /go; busybox for the shell RUN needs.
  go_version=$(go env GOVERSION) go_version=${go_version#go}
  tc=$work/toolchain
  mkdir -p "$tc/etc/ssl/certs" "$tc/bin" "$tc/usr/local" "$tc/go" "$tc/root" "$tc/tmp"
  chmod 1777 "$tc/tmp"
  cp -a "$(go env GOROOT)" "$tc/usr/local/go"
  cp /bin/busybox "$tc/bin/busybox"
  for applet in $(/bin/busybox --list); do [[ $applet == busybox ]] || ln -s busybox "$tc/bin/$applet"; done
  cp /etc/ssl/certs/ca-certificates.crt "$tc/etc/ssl/certs/"
  printf '%s\n' 'FROM scratch' 'COPY . /' \
    'ENV PATH=/usr/local/go/bin:/go/bin:/bin GOPATH=/go HOME=/root GOTOOLCHAIN=local' >"$tc/Containerfile"
  timeout 300 "${podman[@]}" build --quiet --pull=never -t "localhost/golang:$go_version" "$tc" >/dev/null
  pick_runtime "localhost/golang:$go_version" go version ||
    { echo "the Dockerfile's build stage needs containers to run (RUN)"; exit 1; }
  echo "== image: podman build (vfs) of the Dockerfile's build stage"
  timeout 900 "${podman[@]}" build --quiet --pull=never --network host "${run_flags[@]}" \
    --build-arg GO_VERSION="$go_version" --build-arg VERSION="$version" --build-arg COMMIT="$commit" \
    --build-arg CREATED="$created" \
    -f Dockerfile -t "$image" . >/dev/null
fi

inspect() { "${podman[@]}" image inspect --format "$1" "$image"; }
size=$(inspect '{{.Size}}')
user=$(inspect '{{.Config.User}}')
entrypoint=$(inspect '{{json .Config.Entrypoint}}')
cmd=$(inspect '{{json .Config.Cmd}}')
ports=$(inspect '{{range $p, $_ := .Config.ExposedPorts}}{{$p}} {{end}}')
[[ $user =~ ^[0-9]+:[0-9]+$ && $user != 0:* ]] || { echo "image user $user: want a numeric non-root uid:gid"; exit 1; }
licence=$(inspect '{{index .Config.Labels "org.opencontainers.image.licenses"}}')
[[ $licence == Apache-2.0 ]] || { echo "image label org.opencontainers.image.licenses is '$licence': want Apache-2.0"; exit 1; }

echo "== image: run"
if [[ $mode == container ]] || { [[ $mode == auto ]] && pick_runtime --entrypoint /kproxy "$image" validate --config /etc/kproxy/demo.yaml; }; then
  how=container
  container=$(timeout 60 "${podman[@]}" run -d --network host --read-only \
    --cap-drop all --security-opt no-new-privileges "${run_flags[@]}" "$image")
  pid=""
  host_pid=$("${podman[@]}" inspect --format '{{.State.Pid}}' "$container")
  logs() { "${podman[@]}" logs "$container" 2>&1 | tail -30; }
else
  how="unpacked (podman image mount + chroot --userspec=$user)"
  root=$(timeout 60 "${podman[@]}" image mount "$image")
  mounted=yes
  readarray -t argv < <(printf '%s\n%s\n' "$entrypoint" "$cmd" | python3 -c '
import json, sys
for line in sys.stdin:
    for a in json.loads(line) or []:
        print(a)')
  # The image's own entrypoint and arguments, with its root as /, as its
  # user: what a container runtime would exec, minus the namespaces.
  chroot --userspec="$user" "$root" "${argv[@]}" >"$work/kproxy.log" 2>&1 &
  pid=$! host_pid=$!
  logs() { tail -30 "$work/kproxy.log"; }
fi

ready=""
for _ in $(seq 100); do
  if curl -fsS -m 1 http://127.0.0.1:9644/readyz >/dev/null 2>&1; then ready=yes; break; fi
  sleep 0.1
done
[[ -n $ready ]] || { echo "kproxy in the image never became ready"; logs; exit 1; }
curl -fsS -m 2 -o /dev/null http://127.0.0.1:9644/healthz
run_uid=$(awk '/^Uid:/ {print $2}' "/proc/$host_pid/status")
[[ $run_uid == "${user%%:*}" ]] || { echo "kproxy runs as uid $run_uid, image says $user"; exit 1; }

# `kproxy version` (helper server's subcommand) from the image itself must
# report the commit the build was given; a kproxy without the subcommand
# is only noted.
if [[ $how == container ]]; then
  version_out=$(timeout 30 "${podman[@]}" run --rm --network none "${run_flags[@]}" "$image" version 2>&1) || version_out=""
else
  version_out=$(chroot --userspec="$user" "$root" "${argv[0]}" version 2>&1) || version_out=""
fi
if [[ -n $version_out ]]; then
  grep -q "$commit" <<<"$version_out" || { echo "kproxy version in the image does not name commit $commit:"; echo "$version_out"; exit 1; }
else
  version_out="(this kproxy has no version subcommand)"
fi

echo "== image: kcat round trip through 127.0.0.1:9092"
topic=demo
sent=$(for i in 1 2 3 4 5; do echo "image-test-$i-$RANDOM"; done)
timeout 30 kcat -b 127.0.0.1:9092 -t "$topic" -P -X message.timeout.ms=20000 <<<"$sent"
got=$(timeout 30 kcat -b 127.0.0.1:9092 -t "$topic" -C -o beginning -e -q -c 5 -X enable.partition.eof=true)
if [[ $(sort <<<"$sent") != $(sort <<<"$got") ]]; then
  echo "round trip mismatch: sent"; echo "$sent"; echo "got"; echo "$got"; logs; exit 1
fi
echo "produced and consumed $(wc -l <<<"$got") records"

printf '== image: %s\n' "$image"
printf 'size:       %s bytes (%s MiB)\n' "$size" "$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }')"
printf 'user:       %s (process uid %s)\n' "$user" "$run_uid"
printf 'entrypoint: %s\n' "$entrypoint"
printf 'cmd:        %s\n' "$cmd"
printf 'exposed:    %s\n' "$ports"
printf 'version:    %s (%s)\n' "$version" "$commit"
printf 'kproxy version:\n%s\n' "$version_out"
printf 'ran as:     %s\n' "$how"
