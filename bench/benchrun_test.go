package bench_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/bench"
)

// buildBinaries builds kproxy-bench and kproxy into a temporary directory.
func buildBinaries(ctx context.Context, t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, pkg := range []string{"cmd/kproxy-bench", "cmd/kproxy"} {
		out, err := exec.CommandContext(ctx, "go", "build", "-o", dir, "github.com/kproxy/kproxy/"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return dir
}

// runBench runs the kproxy-bench that buildBinaries built into dir with
// args, against the kproxy built beside it, failing the test with the
// run's output if it fails. It returns the report the run wrote (-json),
// decoded strictly so that a field the report's types lack fails the
// test, and its markdown (-md).
func runBench(ctx context.Context, t *testing.T, dir string, args ...string) (bench.Report, string) {
	t.Helper()
	jsonPath := filepath.Join(dir, "out.json")
	mdPath := filepath.Join(dir, "out.md")
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "kproxy-bench"), append(args,
		"-kproxy-bin", filepath.Join(dir, "kproxy"), "-json", jsonPath, "-md", mdPath)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kproxy-bench: %v\n%s", err, out)
	}
	t.Logf("kproxy-bench output:\n%s", out)

	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	return rep, string(md)
}

// wantInMarkdown fails the test for each of wants that md lacks.
func wantInMarkdown(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
