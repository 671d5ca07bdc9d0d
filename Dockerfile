# Builds a static kproxy in a scratch image. Mount your configuration and
# run: docker run -v $PWD/kproxy.yaml:/etc/kproxy/kproxy.yaml IMAGE --config /etc/kproxy/kproxy.yaml
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/kproxy ./cmd/kproxy

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/kproxy /kproxy
COPY configs/ /etc/kproxy/
USER 65532:65532
EXPOSE 9092 9644
ENTRYPOINT ["/kproxy"]
CMD ["--config", "/etc/kproxy/demo.yaml"]
