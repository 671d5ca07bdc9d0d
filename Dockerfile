# kproxy container image: one static binary in an empty (scratch) image.
#
# With Docker or podman, from the repository root:
#
#   docker build -t kproxy \
#     --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run --rm --network host kproxy     # the demo: configs/demo.yaml
#
# The `build` stage compiles kproxy with the Go toolchain image. Where no
# base image can be pulled (the project's CI), build the binary on the host
# instead and pass --build-arg BINARY_FROM=prebuilt: the `prebuilt` stage
# takes kproxy and ca-certificates.crt from the build context's root.
# deploy/image-test.sh does exactly that; deploy/README.md has the details.

ARG GO_VERSION=1.26.8
# build | prebuilt: which stage supplies /out/kproxy and the CA bundle.
ARG BINARY_FROM=build

FROM golang:${GO_VERSION} AS build
ARG VERSION=dev
ARG COMMIT=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static (no cgo), no paths of this machine in the binary, version and
# commit shown by `kproxy version`.
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags="-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/kproxy ./cmd/kproxy \
 && cp /etc/ssl/certs/ca-certificates.crt /out/

FROM scratch AS prebuilt
COPY kproxy ca-certificates.crt /out/

FROM ${BINARY_FROM} AS binary

FROM scratch
ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="kproxy" \
      org.opencontainers.image.description="Transparent Kafka protocol proxy" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"
# System roots for upstream.tls without a ca_file.
COPY --from=binary /out/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=binary /out/kproxy /kproxy
COPY configs/ /etc/kproxy/
# No shell, no passwd file: a numeric user and group, so that Kubernetes'
# runAsNonRoot can verify it.
USER 65532:65532
# 9092 bootstrap; 9100-9131 brokers (listeners.broker_port_base 9100 +
# node id, as in configs/; other node ids need their own ports);
# 9644 admin (/healthz, /readyz, /metrics).
EXPOSE 9092 9100-9131 9644
ENTRYPOINT ["/kproxy"]
CMD ["--config", "/etc/kproxy/demo.yaml"]
