// Command sbom writes the SPDX 2.3 JSON bill of materials of a kproxy
// binary from the binary's own build info (its main module, every linked
// module with its version and go.sum hash, the Go toolchain) and the
// licences of those modules, read from the module cache as for
// THIRD_PARTY_LICENSES.md. scripts/release.sh runs it for each binary:
//
//	go run ./scripts/sbom -binary dist/kproxy -version 1.2.0 -o kproxy.spdx.json
package main

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/kproxy/kproxy/internal/licenses"
	"github.com/kproxy/kproxy/internal/sbom"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
	binary := fs.String("binary", "", "the Go binary to describe (required)")
	version := fs.String("version", "", "the release version the binary was built as (required)")
	name := fs.String("name", "", "the document's name (default: the binary's file name)")
	created := fs.String("created", "", "when the release was made, RFC 3339 (default: now)")
	root := fs.String("root", ".", "the module the binary was built from, to read its modules' licences")
	out := fs.String("o", "", "write the document here (default: standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" || *version == "" || fs.NArg() > 0 {
		return errors.New("usage: sbom -binary FILE -version VERSION [-name NAME] [-created RFC3339] [-root DIR] [-o FILE]")
	}
	when := time.Now()
	if *created != "" {
		t, err := time.Parse(time.RFC3339, *created)
		if err != nil {
			return fmt.Errorf("-created %q: want RFC 3339, e.g. 2026-01-02T15:04:05Z: %w", *created, err)
		}
		when = t
	}
	info, err := buildinfo.ReadFile(*binary)
	if err != nil {
		return fmt.Errorf("build info of %s: %w", *binary, err)
	}
	sum, err := fileSHA256(*binary)
	if err != nil {
		return err
	}
	lic, err := linkedLicences(*root, info.Path, info.Settings)
	if err != nil {
		return err
	}
	if *name == "" {
		*name = filepath.Base(*binary)
	}
	doc, err := sbom.New(info, sbom.Binary{
		Name:        *name,
		Version:     *version,
		SHA256:      sum,
		FileName:    filepath.Base(*binary),
		Licence:     "Apache-2.0",
		Supplier:    "Organization: The kproxy Authors",
		Namespace:   "https://github.com/kproxy/kproxy/spdx",
		Created:     when,
		CreatorTool: "kproxy-sbom",
	}, lic)
	if err != nil {
		return fmt.Errorf("%s: %w", *binary, err)
	}
	var text bytes.Buffer
	enc := json.NewEncoder(&text)
	enc.SetEscapeHTML(false) // a purl's "&" stays readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if *out == "" {
		_, err = stdout.Write(text.Bytes())
		return err
	}
	return os.WriteFile(*out, text.Bytes(), 0o644)
}

// linkedLicences lists the licences of the modules pkg links when built
// for the binary's platform and cgo setting.
func linkedLicences(root, pkg string, settings []debug.BuildSetting) (sbom.Licences, error) {
	var env []string
	for _, s := range settings {
		switch s.Key {
		case "GOOS", "GOARCH", "CGO_ENABLED":
			env = append(env, s.Key+"="+s.Value)
		}
	}
	mods, err := licenses.LinkedFor(root, pkg, env...)
	if err != nil {
		return nil, fmt.Errorf("licences of the modules %s links (%s): %w", pkg, strings.Join(env, " "), err)
	}
	lic := sbom.Licences{}
	for _, m := range mods {
		lic[m.Path] = m.Licences
	}
	return lic, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
