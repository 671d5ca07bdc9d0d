// Package licenses lists the licence of every module the kproxy binary
// links, read from the licence files in the module cache, so that
// THIRD_PARTY_LICENSES.md can be generated and checked: a dependency
// whose licence is missing or not on the permissive list fails the test.
package licenses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Module is one linked module and the licences its licence files name.
type Module struct {
	Path, Version string
	Files         []string // licence files, relative to the module's directory
	Licences      []string // SPDX identifiers found in them, sorted
}

// Permissive are the SPDX identifiers a linked module may carry.
var Permissive = []string{"Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "MIT"}

// fingerprint is text that identifies one licence.
type fingerprint struct {
	spdx string
	re   *regexp.Regexp
}

// fingerprints are checked on the licence text with whitespace folded and
// Markdown or comment decoration kept.
var fingerprints = []fingerprint{
	{"Apache-2.0", regexp.MustCompile(`(?i)apache license,? version 2\.0|apache license\s+version 2\.0`)},
	{"MIT", regexp.MustCompile(`(?i)permission is hereby granted, free of charge, to any person obtaining a copy`)},
	{"BSD-3-Clause", regexp.MustCompile(`(?i)redistribution and use in source and binary forms.*neither the name`)},
	{"BSD-2-Clause", regexp.MustCompile(`(?i)redistribution and use in source and binary forms`)},
	{"ISC", regexp.MustCompile(`(?i)permission to use, copy, modify, and(/or)? distribute this software for any purpose`)},
	{"MPL-2.0", regexp.MustCompile(`(?i)mozilla public license,? (version|v\.?) ?2\.0`)},
	{"GPL", regexp.MustCompile(`(?i)gnu (affero |lesser )?general public license`)},
}

// Classify returns the SPDX identifiers whose fingerprint text holds.
// BSD-2-Clause is not reported beside BSD-3-Clause, whose text contains it.
func Classify(text string) []string {
	folded := strings.Join(strings.Fields(text), " ")
	var out []string
	for _, f := range fingerprints {
		if f.re.MatchString(folded) {
			out = append(out, f.spdx)
		}
	}
	if slices.Contains(out, "BSD-3-Clause") {
		out = slices.DeleteFunc(out, func(s string) bool { return s == "BSD-2-Clause" })
	}
	slices.Sort(out)
	return out
}

// licenceFile matches the names licence files go by.
var licenceFile = regexp.MustCompile(`(?i)^(licen[cs]e|copying|unlicense)([._-].*)?$`)

// Linked lists the modules the package pattern pkg (e.g. ./cmd/kproxy)
// links, run in the module at root, with their licences; the main module
// is left out. The Go toolchain itself is not a module: see Render.
func Linked(root, pkg string) ([]Module, error) {
	return LinkedFor(root, pkg)
}

// LinkedFor is Linked for a build with the environment env added to
// this process's (e.g. GOOS=darwin, GOARCH=arm64, CGO_ENABLED=0): a
// module may be linked on one platform only.
func LinkedFor(root, pkg string, env ...string) ([]Module, error) {
	cmd := exec.Command("go", "list", "-deps", "-json=Module", pkg)
	cmd.Dir = root
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps %s %v: %w: %s", pkg, env, err, stderr.String())
	}
	type listed struct {
		Module *struct {
			Path, Version, Dir string
			Main               bool
			Replace            *struct{ Dir string }
		}
	}
	seen := map[string]bool{}
	var mods []Module
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		m := p.Module
		if m == nil || m.Main || seen[m.Path] {
			continue
		}
		seen[m.Path] = true
		dir := m.Dir
		if m.Replace != nil && m.Replace.Dir != "" {
			dir = m.Replace.Dir
		}
		mod, err := readModule(m.Path, m.Version, dir)
		if err != nil {
			return nil, err
		}
		mods = append(mods, mod)
	}
	slices.SortFunc(mods, func(a, b Module) int { return strings.Compare(a.Path, b.Path) })
	return mods, nil
}

// readModule reads the licence files at the top of the module's directory.
func readModule(path, version, dir string) (Module, error) {
	m := Module{Path: path, Version: version}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return m, fmt.Errorf("module %s: %w", path, err)
	}
	found := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || !licenceFile.MatchString(e.Name()) {
			continue
		}
		text, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return m, fmt.Errorf("module %s: %w", path, err)
		}
		m.Files = append(m.Files, e.Name())
		for _, l := range Classify(string(text)) {
			found[l] = true
		}
	}
	for l := range found {
		m.Licences = append(m.Licences, l)
	}
	slices.Sort(m.Licences)
	return m, nil
}

// Problems names each module whose licence is missing, unrecognised or not
// permissive.
func Problems(mods []Module) []string {
	var out []string
	for _, m := range mods {
		switch {
		case len(m.Files) == 0:
			out = append(out, m.Path+": no licence file")
		case len(m.Licences) == 0:
			out = append(out, fmt.Sprintf("%s: licence files %v name no licence this check knows", m.Path, m.Files))
		default:
			for _, l := range m.Licences {
				if !slices.Contains(Permissive, l) {
					out = append(out, fmt.Sprintf("%s: %s is not on the permissive list %v", m.Path, l, Permissive))
				}
			}
		}
	}
	return out
}

// Render is THIRD_PARTY_LICENSES.md for mods.
func Render(mods []Module) []byte {
	var b bytes.Buffer
	b.WriteString(`# Third-party licences

Every module the ` + "`kproxy`" + ` binary links, with the licences its licence
files name. Generated from the module cache; regenerate after changing
dependencies with ` + "`go test ./internal/licenses -run TestThirdPartyLicensesFile -update`" + `.
The test fails when a linked module has no licence file or one that is not
` + strings.Join(Permissive, ", ") + `.

The Go standard library and runtime, linked into every Go binary, are under
the BSD-3-Clause licence of the Go project.

| module | version | licences | files |
| --- | --- | --- | --- |
`)
	for _, m := range mods {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", m.Path, m.Version, strings.Join(m.Licences, ", "), strings.Join(m.Files, ", "))
	}
	return b.Bytes()
}
