package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// TestPackage: the archive is NAME-VERSION.tgz with version and appVersion
// overridden, as helm package --version --app-version writes it.
func TestPackage(t *testing.T) {
	out := t.TempDir()
	var stdout bytes.Buffer
	if err := run([]string{"-version", "1.2.3-rc.1", "-o", out, "../../../kproxy"}, &stdout); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, "kproxy-1.2.3-rc.1.tgz")
	if strings.TrimSpace(stdout.String()) != path {
		t.Errorf("printed %q, want %s", stdout.String(), path)
	}
	c, err := loader.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.Version != "1.2.3-rc.1" || c.Metadata.AppVersion != "1.2.3-rc.1" {
		t.Errorf("version %q appVersion %q, want both 1.2.3-rc.1", c.Metadata.Version, c.Metadata.AppVersion)
	}
	if len(c.Templates) == 0 || c.Values["image"] == nil {
		t.Errorf("packaged chart lost its templates or values: %d templates, values %v", len(c.Templates), c.Values)
	}
}

// TestNotSemVer: a version that is not SemVer 2 is refused, named.
func TestNotSemVer(t *testing.T) {
	err := run([]string{"-version", "1.x", "-o", t.TempDir(), "../../../kproxy"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `"1.x"`) {
		t.Errorf("error %v, want one naming the version 1.x", err)
	}
}
