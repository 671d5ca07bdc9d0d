// Command grafana writes kproxy's Grafana dashboard (kproxy.json), built
// with the Grafana Foundation SDK. It is a module of its own so the SDK is
// no dependency of kproxy itself. Regenerate after changing dashboard.go:
//
//	cd deploy/grafana && go run .
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("o", "kproxy.json", "where to write the dashboard JSON")
	flag.Parse()
	b, err := dashboardJSON()
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "grafana:", err)
		os.Exit(1)
	}
}
