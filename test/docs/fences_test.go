package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// codeBlock is one fenced code block of a Markdown file.
type codeBlock struct {
	File   string // relative to the repository root, slash-separated
	Line   int    // the opening fence's line, from 1
	Lang   string // the info string's first word, lower case; "" when the fence names none
	Marker string // the HTML comment on the line just before the fence, without <!-- and -->; "" when there is none
	Body   string // the lines between the fences, the opening fence's indentation removed
}

// Where returns FILE:LINE, the block's name in messages and subtests.
func (b codeBlock) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

var (
	fenceOpen  = regexp.MustCompile("^(\\s*)(`{3,}|~{3,})[ \t]*([^`\\s]*)")
	markerLine = regexp.MustCompile(`^\s*<!--\s*(.*?)\s*-->\s*$`)
)

// markdownFiles lists the repository's Markdown files, relative to root:
// every *.md outside hidden directories and testdata, so a new document
// is checked without anyone remembering to add it.
func markdownFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

// readBlocks returns the fenced code blocks of root/rel in order.
func readBlocks(root, rel string) ([]codeBlock, error) {
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(text), "\n")
	var blocks []codeBlock
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence := m[1], m[2]
		b := codeBlock{File: rel, Line: i + 1, Lang: strings.ToLower(m[3])}
		if i > 0 {
			if c := markerLine.FindStringSubmatch(lines[i-1]); c != nil {
				b.Marker = c[1]
			}
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if isClosingFence(lines[i], fence) {
				closed = true
				break
			}
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if !closed {
			return nil, fmt.Errorf("%s: the code block opened here is never closed (with %s)", b.Where(), fence)
		}
		b.Body = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// isClosingFence: a line of only the opening fence's character, at least
// as many of them as opened the block.
func isClosingFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == ""
}
