// Command package-chart packages a Helm chart as `helm package --version V
// --app-version A` does, with Helm's Go SDK (no helm binary needed):
// Chart.yaml's version and appVersion are overridden and the chart is
// written as NAME-VERSION.tgz. scripts/release.sh runs it:
//
//	cd deploy/helm/test && go run ./cmd/package-chart -version 1.2.0 -o ../../../dist ../kproxy
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "package-chart:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("package-chart", flag.ContinueOnError)
	version := fs.String("version", "", "the chart's version, SemVer 2 (required)")
	appVersion := fs.String("app-version", "", "the chart's appVersion, the default image tag (default: -version)")
	out := fs.String("o", ".", "directory to write NAME-VERSION.tgz to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" || fs.NArg() != 1 {
		return errors.New("usage: package-chart -version VERSION [-app-version VERSION] [-o DIR] CHART_DIR")
	}
	if *appVersion == "" {
		*appVersion = *version
	}
	c, err := loader.Load(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("load chart %s: %w", fs.Arg(0), err)
	}
	c.Metadata.Version = *version
	c.Metadata.AppVersion = *appVersion
	// Validate checks what helm package does, the version being SemVer 2.
	if err := c.Validate(); err != nil {
		return fmt.Errorf("chart %s with version %q, appVersion %q: %w", fs.Arg(0), *version, *appVersion, err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	path, err := chartutil.Save(c, *out)
	if err != nil {
		return fmt.Errorf("package chart %s: %w", fs.Arg(0), err)
	}
	fmt.Fprintln(stdout, path)
	return nil
}
