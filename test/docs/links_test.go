// Package docs checks what the documentation promises about the code: a
// link that names a test must lead to a file that holds that test, so a
// promise in docs/security.md cannot outlive the test that holds it.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testLink is a Markdown link whose text names a Go test or fuzz target
// and whose target is a Go file: [`TestName`](../path/x_test.go).
var testLink = regexp.MustCompile("\\[`((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)`\\]\\(([^)#]+\\.go)\\)")

// TestLinkedTestsExist: every test a document links to is defined in the
// file it links to.
func TestLinkedTestsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(root, "README.md"))
	links := 0
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testLink.FindAllStringSubmatch(string(text), -1) {
			links++
			name, file := m[1], filepath.Join(filepath.Dir(doc), m[2])
			src, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s links %s to %s: %v", filepath.Base(doc), name, m[2], err)
				continue
			}
			if !strings.Contains(string(src), "func "+name+"(") {
				t.Errorf("%s links %s to %s, which does not define it", filepath.Base(doc), name, m[2])
			}
		}
	}
	if links == 0 {
		t.Fatal("no document links to a test: the pattern no longer matches the docs")
	}
}
