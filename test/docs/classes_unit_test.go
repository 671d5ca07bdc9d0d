package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClassify: each language takes the markers its table row in
// docs/architecture.md names, and a block in no class fails saying what
// would be valid.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		lang, marker string
		want         string // the class, or a piece of the error
	}{
		{"yaml", "", "complete"},
		{"yaml", "complete, files elsewhere", "complete, files elsewhere"},
		{"yaml", "fragment of configs/example.yaml", "fragment of configs/example.yaml"},
		{"yaml", "not kproxy configuration: helm values", "not kproxy configuration: helm values"},
		{"yaml", "runs", "error: a ```yaml block needs a marker"},
		{"yaml", "illustrative: placeholders", "error: a ```yaml block needs a marker"},
		{"sh", "", "error: <!-- runs -->"},
		{"sh", "runs", "runs"},
		{"bash", "runs in an empty directory", "runs in an empty directory"},
		{"console", "run by TestQuickStart", "run by TestQuickStart"},
		{"sh", "illustrative:", "error: needs its reason"},
		{"sh", "runs, files elsewhere", "error: applies only to complete and fragment"},
		{"sh", "maybe runs", "error: is no marker"},
		{"go", "", "error: a ```go block needs a marker"},
		{"go", "illustrative: a snippet", "illustrative: a snippet"},
		{"text", "", "output"},
		{"json", "", "output"},
		{"json", "runs", "error: output and takes no marker"},
		{"properties", "", "error: not kproxy configuration: PROGRAM"},
		{"haproxy", "not kproxy configuration: HAProxy", "not kproxy configuration: HAProxy"},
		{"", "", "error: the fence names no language"},
	} {
		c, err := classify(codeBlock{Lang: tt.lang, Marker: tt.marker})
		got := c.String()
		if err != nil {
			got = "error: " + err.Error()
		}
		if want, isErr := strings.CutPrefix(tt.want, "error: "); isErr {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("```%s <!-- %s -->: %s, want an error with %q", tt.lang, tt.marker, got, want)
			}
		} else if got != tt.want {
			t.Errorf("```%s <!-- %s -->: %s, want %s", tt.lang, tt.marker, got, tt.want)
		}
	}
}

// TestReadBlocks: fences of backticks or tildes, indented in a list, with
// the marker on the line before; an unclosed fence is an error.
func TestReadBlocks(t *testing.T) {
	dir := t.TempDir()
	doc := "# T\n\n<!-- runs -->\n```sh\necho hi\n```\n\n- item:\n\n  <!-- illustrative: a flag -->\n  ```sh\n  -Dx=y\n  ```\n\n~~~~yaml\na: 1\n```\n~~~~\n"
	if err := os.WriteFile(filepath.Join(dir, "t.md"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	blocks, err := readBlocks(dir, "t.md")
	if err != nil {
		t.Fatal(err)
	}
	want := []codeBlock{
		{File: "t.md", Line: 4, Lang: "sh", Marker: "runs", Body: "echo hi\n"},
		{File: "t.md", Line: 11, Lang: "sh", Marker: "illustrative: a flag", Body: "-Dx=y\n"},
		{File: "t.md", Line: 15, Lang: "yaml", Body: "a: 1\n```\n"},
	}
	if len(blocks) != len(want) {
		t.Fatalf("read %d blocks, want %d: %+v", len(blocks), len(want), blocks)
	}
	for i := range want {
		if blocks[i] != want[i] {
			t.Errorf("block %d: %+v, want %+v", i, blocks[i], want[i])
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "open.md"), []byte("```sh\necho\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readBlocks(dir, "open.md"); err == nil || !strings.Contains(err.Error(), "open.md:1") {
		t.Errorf("an unclosed fence: %v, want an error naming open.md:1", err)
	}
}
