# kproxy container image: one static binary in an empty (scratch) image.
#
# With Docker or podman, from the repository root:
#
#   docker build -t kproxy \
#     --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ) .
#   docker run --rm --network host kproxy     # the demo: configs/demo.yaml
#
# The `build` stage compiles kproxy with the Go toolchain image. Where no
# base image can be pulled (the project's CI), build the binary on the host
# and hand it in as that stage: a directory with out/kproxy and
# out/ca-certificates.crt, given as --build-context build=DIR (podman,
# buildah, docker buildx) replaces the stage, and the final image is the
# same. deploy/image-test.sh does exactly that; deploy/README.md has the
# details.

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
ARG VERSION=dev
ARG COMMIT=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static (no cgo), no paths of this machine in the binary, no DWARF,
# version and commit shown by `kproxy version` (and kept in the symbol
# table, as scripts/lib/build.sh builds release binaries).
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags="-w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/kproxy ./cmd/kproxy \
 && cp /etc/ssl/certs/ca-certificates.crt /out/

FROM scratch
ARG VERSION=dev
ARG COMMIT=unknown
# When the image was built, RFC 3339 (scripts/release.sh: the commit's time).
ARG CREATED=""
LABEL org.opencontainers.image.title="kproxy" \
      org.opencontainers.image.description="Transparent Kafka protocol proxy" \
      org.opencontainers.image.source="https://github.com/kproxy/kproxy" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0"
# System roots for upstream.tls without a ca_file.
COPY --from=build /out/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/kproxy /kproxy
COPY configs/ /etc/kproxy/
COPY LICENSE NOTICE THIRD_PARTY_LICENSES.md /licenses/
# No shell, no passwd file: a numeric user and group, so that Kubernetes'
# runAsNonRoot can verify it.
USER 65532:65532
# 9092 bootstrap; 9100-9131 brokers (listeners.broker_port_base 9100 +
# node id, as in configs/; other node ids need their own ports);
# 9644 admin (/healthz, /readyz, /metrics).
EXPOSE 9092 9100-9131 9644
ENTRYPOINT ["/kproxy"]
CMD ["--config", "/etc/kproxy/demo.yaml"]
