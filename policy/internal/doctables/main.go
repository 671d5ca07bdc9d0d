// Command doctables writes docs/policy.md's generated tables (the
// operation table, the rule operations and the response fields that can
// reveal a resource) from the policy package, between their markers.
// policy/doc.go runs it: go generate ./policy.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
)

func main() {
	doc := flag.String("doc", "docs/policy.md", "the file holding the generated sections")
	flag.Parse()
	if err := rewrite(*doc); err != nil {
		fmt.Fprintln(os.Stderr, "doctables:", err)
		os.Exit(1)
	}
}

// rewrite replaces every section of the file at path with what it renders
// now.
func rewrite(path string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, s := range sections() {
		if doc, err = s.splice(doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return os.WriteFile(path, doc, 0o644)
}

// splice returns doc with the text between s's markers replaced by what s
// renders now.
func (s section) splice(doc []byte) ([]byte, error) {
	i, j, err := s.find(doc)
	if err != nil {
		return nil, err
	}
	return append(append(append([]byte{}, doc[:i]...), s.render()...), doc[j:]...), nil
}

// find returns where the text between s's markers begins and ends in doc.
func (s section) find(doc []byte) (int, int, error) {
	i, j := bytes.Index(doc, []byte(s.begin())), bytes.Index(doc, []byte(s.end()))
	if i < 0 || j < i {
		return 0, 0, fmt.Errorf("lacks the markers %q and %q", s.begin(), s.end())
	}
	return i + len(s.begin()), j, nil
}
