package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// versionFields parses kproxy version's "name value" lines.
func versionFields(t *testing.T, out string) map[string]string {
	t.Helper()
	fields := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("version line %q is not \"name value\"", line)
		}
		fields[name] = strings.TrimSpace(value)
	}
	if len(fields) != 4 {
		t.Fatalf("version printed %d fields, want version, commit, go, kmsg: %q", len(fields), out)
	}
	return fields
}

// TestVersionDefaultsToBuildInfo: without -ldflags, the version and
// commit are what the toolchain recorded (a modified tree marked dirty);
// with them, theirs.
func TestVersionDefaultsToBuildInfo(t *testing.T) {
	info := &debug.BuildInfo{
		Main:     debug.Module{Path: "github.com/kproxy/kproxy", Version: "v1.2.3"},
		Deps:     []*debug.Module{{Path: "github.com/twmb/franz-go", Version: "v1.22.3"}, {Path: kmsgModule, Version: "v1.15.1"}},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}},
	}
	for _, tc := range []struct {
		version, commit         string
		wantVersion, wantCommit string
	}{
		{"", "", "v1.2.3", "0123abcd-dirty"},
		{"v2.0.0", "feedface", "v2.0.0", "feedface"},
	} {
		var out bytes.Buffer
		printVersion(&out, info, tc.version, tc.commit)
		f := versionFields(t, out.String())
		if f["version"] != tc.wantVersion || f["commit"] != tc.wantCommit || f["go"] != runtime.Version() || f["kmsg"] != "v1.15.1" {
			t.Errorf("ldflags %q %q: %v", tc.version, tc.commit, f)
		}
	}
	var out bytes.Buffer
	printVersion(&out, nil, "", "")
	if f := versionFields(t, out.String()); f["version"] != "unknown" || f["kmsg"] != "unknown" {
		t.Errorf("without build info: %v", f)
	}
}

// TestBinaryVersionFromLdflags builds kproxy as the container build does,
// with version and commit set by -ldflags -X, and runs kproxy version.
func TestBinaryVersionFromLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "kproxy")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test -X main.commit=c0ffee", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	modules, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", kmsgModule).Output()
	if err != nil {
		t.Fatal(err)
	}
	f := versionFields(t, string(out))
	if f["version"] != "v9.8.7-test" || f["commit"] != "c0ffee" || f["go"] != runtime.Version() || f["kmsg"] != strings.TrimSpace(string(modules)) {
		t.Errorf("kproxy version: %v (kmsg in go.mod %s)", f, modules)
	}
}
