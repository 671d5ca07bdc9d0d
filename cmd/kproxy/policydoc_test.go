package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// docExample is a command docs/policy.md shows and the output it shows
// for it.
var docExample = regexp.MustCompile("<!-- run by TestPolicyDocExamples -->\n```sh\n(kproxy [^\n]*)\n```\n\n```text\n((?s:.*?))```")

// TestPolicyDocExamples: each explain and diff example in docs/policy.md
// that says it is run here prints exactly the output the document shows,
// run from the repository's root as the document's reader would.
func TestPolicyDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := docExample.FindAllStringSubmatch(string(doc), -1)
	if markers := strings.Count(string(doc), "<!-- run by TestPolicyDocExamples -->"); len(examples) != markers || markers < 2 {
		t.Fatalf("%d examples parsed of %d markers: each marker must precede a ```sh block of one kproxy command and a ```text block", len(examples), markers)
	}
	t.Chdir("../..")
	for _, ex := range examples {
		args := strings.Fields(strings.TrimPrefix(ex[1], "kproxy "))
		var stdout, stderr bytes.Buffer
		if code := runArgs(args, &stdout, &stderr); code != 0 {
			t.Errorf("%s: exit %d, stderr %s", ex[1], code, stderr.String())
			continue
		}
		if stdout.String() != ex[2] {
			t.Errorf("%s prints:\n%s\ndocs/policy.md shows:\n%s", ex[1], stdout.String(), ex[2])
		}
	}
}
