package docs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
)

// blockResult is one row of the inventory.
type blockResult struct {
	Block  codeBlock
	Class  string
	Result string
}

// TestCodeBlocksRunAsWritten: every fenced code block in the repository's
// Markdown is in a class (docs/architecture.md, "Code blocks in the
// documentation"), and does what its class promises: kproxy configuration
// passes the real binary's kproxy validate (merged into its complete file
// if it is a fragment), commands marked `runs` exit 0, a `run by` names a
// test that exists. With -v it logs the inventory of every block.
func TestCodeBlocksRunAsWritten(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []codeBlock
	for _, f := range files {
		bs, err := readBlocks(root, f)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	if len(blocks) < 10 {
		t.Fatalf("only %d code blocks in %d Markdown files: the fence pattern no longer matches the docs", len(blocks), len(files))
	}
	tests, err := testNames(root)
	if err != nil {
		t.Fatal(err)
	}
	bin := testkit.BuildKproxy(t)

	var mu sync.Mutex
	var inventory []blockResult
	t.Run("blocks", func(t *testing.T) {
		for _, b := range blocks {
			t.Run(b.Where(), func(t *testing.T) {
				t.Parallel()
				class, result := checkBlock(t, b, root, bin, tests)
				mu.Lock()
				inventory = append(inventory, blockResult{b, class, result})
				mu.Unlock()
			})
		}
	})
	logInventory(t, inventory)
}

// checkBlock classifies and checks one block, failing or skipping t, and
// returns the inventory's class and result.
func checkBlock(t *testing.T, b codeBlock, root, bin string, tests map[string]bool) (class, result string) {
	c, err := classify(b)
	if err != nil {
		t.Errorf("%s: %v", b.Where(), err)
		return "none", "FAIL: " + firstLine(err.Error())
	}
	err, done := checkClass(t, b, c, root, bin, tests)
	switch {
	case errors.Is(err, errNotInstalled) && os.Getenv("CI") == "":
		t.Skipf("%s: %v (fails in CI, where CI is set)", b.Where(), err)
		return c.String(), "skipped: " + firstLine(err.Error())
	case err != nil:
		t.Errorf("%s (%s): %v", b.Where(), c, err)
		return c.String(), "FAIL: " + firstLine(err.Error())
	}
	return c.String(), done
}

// checkClass does what the class promises and says what it checked.
func checkClass(t *testing.T, b codeBlock, c blockClass, root, bin string, tests map[string]bool) (error, string) {
	switch c.Kind {
	case kindComplete:
		done, err := validateConfig(bin, root, t.TempDir(), []byte(b.Body), c.FilesElsewhere)
		return err, done
	case kindFragment:
		merged, err := mergedConfig(root, c.Base, b.Body)
		if err != nil {
			return err, ""
		}
		done, err := validateConfig(bin, root, t.TempDir(), merged, c.FilesElsewhere)
		return err, "merged, " + done
	case kindForeign:
		if yamlLangs[b.Lang] {
			return parsesAsYAML(b.Body), "parses as YAML"
		}
		return nil, "not checked"
	case kindRuns:
		return runShell(bin, root, b.Body), "bash: exit 0"
	case kindRunsEmptyDir:
		return runShell(bin, t.TempDir(), b.Body), "bash: exit 0"
	case kindRunBy:
		return checkRunBy(root, c.Test, tests), "defined"
	case kindOutput:
		if b.Lang == "json" {
			return jsonLines(b.Body), "each line is JSON"
		}
		return nil, "output"
	case kindIllustrative:
		return nil, "not run"
	}
	return fmt.Errorf("no check for class %q", c.Kind), ""
}

// logInventory logs every block: file, line, language, class, result.
func logInventory(t *testing.T, inventory []blockResult) {
	sort.Slice(inventory, func(i, j int) bool {
		a, b := inventory[i].Block, inventory[j].Block
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	var s strings.Builder
	s.WriteString("inventory of the documentation's code blocks:\n| file | line | language | class | result |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range inventory {
		lang := r.Block.Lang
		if lang == "" {
			lang = "(none)"
		}
		fmt.Fprintf(&s, "| %s | %d | %s | %s | %s |\n", r.Block.File, r.Block.Line, lang, r.Class, strings.ReplaceAll(r.Result, "|", `\|`))
	}
	t.Log(s.String())
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
