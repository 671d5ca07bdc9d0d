# shellcheck shell=bash
# Sourced by deploy/image-test.sh, scripts/release.sh and
# scripts/release-check.sh: kproxy's image built with podman from a binary
# built on the host, and run, in a private podman store.
#
# No base image can be pulled here, so the binary is handed in as the
# Dockerfile's `build` stage (--build-context build=DIR); the final stage
# is the same FROM scratch a `docker build` produces.

# image_store DIR: podman (an array) uses a private vfs store under DIR,
# so nothing of the machine's own podman state is touched and cleanup is
# one rm.
image_store() {
  podman=(podman --root "$1/storage" --runroot "$1/run" --storage-driver vfs)
  run_flags=()
}

# image_build_prebuilt CONTEXT BINARY IMAGE VERSION COMMIT CREATED [podman build flags...]
# builds the Dockerfile as IMAGE with BINARY (static, linux) handed in as
# its build stage, staged in the directory CONTEXT. VERSION, COMMIT and
# CREATED (RFC 3339) become the OCI labels. Run from the repository root.
image_build_prebuilt() {
  local context=$1 binary=$2 image=$3 version=$4 commit=$5 created=$6
  shift 6
  mkdir -p "$context/out"
  cp "$binary" "$context/out/kproxy"
  if ldd "$context/out/kproxy" >/dev/null 2>&1; then
    echo "kproxy is dynamically linked:"; ldd "$context/out/kproxy"; return 1
  fi
  cp /etc/ssl/certs/ca-certificates.crt "$context/out/"
  timeout 300 "${podman[@]}" build --quiet --pull=never --build-context build="$context" \
    --build-arg VERSION="$version" --build-arg COMMIT="$commit" --build-arg CREATED="$created" \
    "$@" -f Dockerfile -t "$image" . >/dev/null
}

# pick_runtime finds podman settings under which containers start here,
# trying `podman run --rm IMAGE ARGS...`: the defaults, then runc with
# cgroupfs (crun refuses a hybrid cgroup tree), each with rlimits within
# the hard ones (without CAP_SYS_RESOURCE nothing may raise them, and
# podman's defaults ask for more). It adds what worked to podman and
# run_flags.
pick_runtime() {
  local nofile nproc out global
  ((${#run_flags[@]} == 0)) || return 0 # picked already
  nofile=$(ulimit -Hn) nproc=$(ulimit -Hu)
  [[ $nofile == unlimited ]] && nofile=1048576
  [[ $nproc == unlimited ]] || ((nproc > 4096)) && nproc=4096
  local -a limits=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")
  local -a attempts=("" "--cgroup-manager cgroupfs --runtime runc")
  for global in "${attempts[@]}"; do
    # shellcheck disable=SC2206
    local -a g=($global)
    if out=$(timeout 60 "${podman[@]}" "${g[@]}" run --rm --network none "${limits[@]}" "$@" 2>&1); then
      podman+=("${g[@]}")
      run_flags=("${limits[@]}")
      echo "containers run here (podman ${global:-defaults}): $out"
      return 0
    fi
    echo "podman run ${global:-with defaults} failed: $(tail -1 <<<"$out")"
  done
  return 1
}

# image_runtime IMAGE ARGS... sets image_ran to how images run here:
# "container" where `podman run IMAGE ARGS...` works, else "unpacked".
# Call it outside $(...), so that what pick_runtime found is kept.
# KPROXY_IMAGE_RUN=unpacked forces the fallback.
image_runtime() {
  if [[ ${KPROXY_IMAGE_RUN:-auto} == unpacked ]]; then
    image_ran=unpacked
  elif pick_runtime "$@" >/dev/null; then image_ran=container; else image_ran=unpacked; fi
}

# image_run IMAGE ARGS... runs the image's entrypoint with ARGS and prints
# its output, as image_runtime found: in a container, or with the image's
# filesystem unpacked (podman image mount) as root, as the image's user
# (chroot --userspec).
image_run() {
  local image=$1 root user rc=0
  local -a image_entrypoint
  shift
  if [[ $image_ran == container ]]; then
    timeout 60 "${podman[@]}" run --rm --network none "${run_flags[@]}" "$image" "$@" 2>&1
    return
  fi
  user=$("${podman[@]}" image inspect --format '{{.Config.User}}' "$image")
  readarray -t image_entrypoint < <("${podman[@]}" image inspect --format '{{range .Config.Entrypoint}}{{println .}}{{end}}' "$image" | sed '/^$/d')
  root=$(timeout 60 "${podman[@]}" image mount "$image")
  chroot --userspec="$user" "$root" "${image_entrypoint[@]}" "$@" 2>&1 || rc=$?
  timeout 30 "${podman[@]}" image unmount "$image" >/dev/null 2>&1 || true
  return "$rc"
}
