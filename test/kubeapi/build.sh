#!/usr/bin/env bash
# Builds etcd and kube-apiserver (the versions test/kubeapi/go.mod pins)
# into DIR, and copies the prometheus-operator CRDs the chart's
# ServiceMonitor and PrometheusRule need into DIR/crds, for
# deploy/helm/test's TestKubeAPIServerDryRun (KPROXY_KUBEAPI_DIR=DIR).
# Everything comes from the Go module proxy.
set -euo pipefail
dir=${1:?usage: build.sh DIR}
cd "$(dirname "$0")"
# The newest prometheus-operator main module the Go module proxy serves
# (its example/prometheus-operator-crd holds the CRD YAML).
prometheus_operator=v0.85.0
mkdir -p "$dir/crds"
go build -o "$dir/etcd" go.etcd.io/etcd/server/v3
go build -o "$dir/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
src=$(go mod download -json "github.com/prometheus-operator/prometheus-operator@$prometheus_operator" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
for crd in servicemonitors prometheusrules; do
  cp "$src/example/prometheus-operator-crd/monitoring.coreos.com_$crd.yaml" "$dir/crds/"
done
chmod u+w "$dir/crds"/*.yaml
