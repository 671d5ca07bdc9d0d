package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// build builds testdata/greet for goos/goarch with -X main.greeting set
// and the extra ldflags.
func build(t *testing.T, goos, goarch, ldflags string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "greet")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-X main.greeting=hello-1.2.0 "+ldflags, "-o", bin, "./testdata/greet")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s/%s: %v\n%s", goos, goarch, err, out)
	}
	return bin
}

// TestStampedString reads the stamped string from an ELF and a Mach-O
// binary, neither of which could run here.
func TestStampedString(t *testing.T) {
	for _, target := range [][2]string{{"linux", "arm64"}, {"darwin", "amd64"}} {
		bin := build(t, target[0], target[1], "-w")
		got, err := stampedString(bin, "main.greeting")
		if err != nil || got != "hello-1.2.0" {
			t.Errorf("%s/%s: %q, %v; want hello-1.2.0", target[0], target[1], got, err)
		}
		if _, err := stampedString(bin, "main.nothing"); err == nil || !strings.Contains(err.Error(), "no symbol main.nothing") {
			t.Errorf("%s/%s: a missing symbol gives %v", target[0], target[1], err)
		}
	}
}

// TestStrippedBinary: without a symbol table the error says why.
func TestStrippedBinary(t *testing.T) {
	bin := build(t, "linux", "amd64", "-s -w")
	if _, err := stampedString(bin, "main.greeting"); err == nil || !strings.Contains(err.Error(), "built with -s") {
		t.Errorf("stripped binary: %v, want an error saying it was built with -s", err)
	}
	if _, err := stampedString("main_test.go", "main.greeting"); err == nil || !strings.Contains(err.Error(), "neither ELF nor Mach-O") {
		t.Errorf("a text file: %v", err)
	}
}
