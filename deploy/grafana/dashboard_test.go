package main

import (
	"bytes"
	"os"
	"testing"
)

// TestCommittedDashboardIsGenerated: kproxy.json is exactly what the
// generator writes, so nobody edits the JSON by hand and nobody changes
// the generator without regenerating it.
func TestCommittedDashboardIsGenerated(t *testing.T) {
	want, err := dashboardJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("kproxy.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("deploy/grafana/kproxy.json differs from the generator's output: run `cd deploy/grafana && go run .` and commit the result")
	}
}
