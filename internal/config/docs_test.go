package config

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit/golden"
)

const referenceDoc = "docs/configuration.md"

// TestConfigurationDoc: docs/configuration.md is what the reference
// generates.
func TestConfigurationDoc(t *testing.T) {
	want := configurationDoc()
	golden.Check(t, filepath.Join(root, referenceDoc), want, *update,
		"edit internal/config/reference_table.go (or policy/policyconfig/reference.go), not the file, then go test ./internal/config -run TestConfigurationDoc -update")
}

// configurationDoc renders Reference as docs/configuration.md: an
// introduction, then one table per top-level section.
func configurationDoc() []byte {
	var b bytes.Buffer
	b.WriteString(`# Configuration reference

<!-- Generated from internal/config/reference_table.go and policy/policyconfig/reference.go by
go test ./internal/config -run TestConfigurationDoc -update; edit those, not this file. -->

kproxy reads one YAML file, ` + "`kproxy run --config FILE`" + `. Every key it
accepts is below, with its default and what it does. Unknown keys are
errors, so a typo never leaves a setting at its default silently.
` + "`kproxy validate --config FILE`" + ` loads the file as ` + "`run`" + ` would,
reads the files it names, reports every problem at once, each naming its
key, and warns of settings a client can sidestep (such as grants to
` + "`client_id:`" + ` principals on listeners without authentication; see
[docs/policy.md](policy.md#what-a-client-can-choose)). Some keys can also
be set from the environment or flags (the README's Command line section).

- ` + "`kproxy config defaults`" + ` prints a whole file with every key at
  its default and a comment saying what it does; the sections that turn
  something on (` + "`tls`" + `, ` + "`sasl`" + `, ` + "`policy`" + `, ...) and list
  entries are commented out.
- ` + "`kproxy config schema`" + ` prints a JSON Schema (draft 2020-12) of the
  file; [configs/kproxy.schema.json](../configs/kproxy.schema.json) is its
  output. Editors using yaml-language-server (VS Code's YAML extension,
  Neovim, Helix, ...) then complete keys, show these descriptions and flag
  unknown keys, wrong types and values: save it next to your file and make
  ` + "`# yaml-language-server: $schema=kproxy.schema.json`" + ` the file's
  first line (the path is relative to the YAML file; a URL works too).
  The files in [configs/](../configs) start with that line.

Keys are written as dotted paths: ` + "`listeners.tls.cert_file`" + ` is
` + "`cert_file`" + ` inside ` + "`tls`" + ` inside ` + "`listeners`" + `; ` + "`name[]`" + ` is a
list of sections and ` + "`name[].key`" + ` a key of each entry. A default in
words (such as ` + "`bind_host`" + `) is taken from another key; a section left
out is off.

## Sections written in several places

These take the keys of another section, documented once, there:

`)
	for _, s := range SharedSections() {
		fmt.Fprintf(&b, "- `%s` takes the keys of [`%s`](#%s).\n", s.At, s.SameAs, anchor(s.SameAs))
	}
	b.WriteString("\n`virtual_clusters[].upstream` may not hold `embedded`, which is set at the top level only.\n")

	var section string
	for _, d := range Reference() {
		top, _, _ := strings.Cut(d.Key, ".")
		top = strings.TrimSuffix(top, "[]")
		if top != section {
			section = top
			fmt.Fprintf(&b, "\n## %s\n\n| key | default | values | meaning |\n| --- | --- | --- | --- |\n", section)
		}
		target := "" // a top-level key's heading is its anchor
		if strings.Contains(strings.TrimSuffix(d.Key, "[]"), ".") || strings.Contains(d.Key, "[].") {
			target = fmt.Sprintf(`<a id="%s"></a>`, anchor(d.Key))
		}
		fmt.Fprintf(&b, "| %s`%s` | %s | %s | %s |\n", target, d.Key, cell(defaultCell(d)), cell(valuesCell(d.Values)), cell(d.Meaning))
	}
	return b.Bytes()
}

// anchor is the HTML id of a key's row: listeners.sni.tls is
// listeners-sni-tls.
func anchor(key string) string {
	return strings.NewReplacer(".", "-", "[]", "").Replace(key)
}

// defaultCell is a row's default as the table shows it.
func defaultCell(d KeyDoc) string {
	switch {
	case d.Default != "" && d.DefaultNote != "":
		return "`" + d.Default + "` (" + d.DefaultNote + ")"
	case d.Default != "":
		return "`" + d.Default + "`"
	}
	return d.DefaultNote
}

func valuesCell(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return "`" + strings.Join(values, "`, `") + "`"
}

// cell escapes what would end a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
