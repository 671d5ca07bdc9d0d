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
	bin := testkit.SharedKproxy(t)

	var mu sync.Mutex
	var inventory []blockResult
	t.Run("blocks", func(t *testing.T) {
		for _, base := range fragmentBases(blocks) {
			t.Run("base "+base.Path, func(t *testing.T) {
				t.Parallel()
				text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(base.Path)))
				if err != nil {
					t.Fatalf("a fragment's complete file: %v", err)
				}
				if _, err := validateConfig(bin, root, t.TempDir(), text, base.FilesElsewhere); err != nil {
					t.Errorf("%s, which fragments are merged into: %v", base.Path, err)
				}
			})
		}
		for _, b := range blocks {
			t.Run(b.Where(), func(t *testing.T) {
				t.Parallel()
				class, result, skip := checkBlock(t, b, root, bin, tests)
				mu.Lock()
				inventory = append(inventory, blockResult{b, class, result})
				mu.Unlock()
				if skip {
					t.Skip(result)
				}
			})
		}
	})
	logInventory(t, inventory)
}

// checkBlock classifies and checks one block, failing t if it fails, and
// returns the inventory's class and result, and whether to skip it (a
// command missing outside CI).
func checkBlock(t *testing.T, b codeBlock, root, bin string, tests map[string]bool) (class, result string, skip bool) {
	c, err := classify(b)
	if err != nil {
		t.Errorf("%s: %v", b.Where(), err)
		return "none", "FAIL: " + firstLine(err.Error()), false
	}
	done, err := checkClass(t, b, c, root, bin, tests)
	switch {
	case errors.Is(err, errNotInstalled) && os.Getenv("CI") == "":
		t.Logf("%s: %v", b.Where(), err)
		return c.String(), "skipped (fails in CI): " + firstLine(err.Error()), true
	case err != nil:
		t.Errorf("%s (%s): %v", b.Where(), c, err)
		return c.String(), "FAIL: " + firstLine(err.Error()), false
	}
	return c.String(), done, false
}

// checkClass does what the class promises and says what it checked.
func checkClass(t *testing.T, b codeBlock, c blockClass, root, bin string, tests map[string]bool) (string, error) {
	switch c.Kind {
	case kindComplete:
		return validateConfig(bin, root, t.TempDir(), []byte(b.Body), c.FilesElsewhere)
	case kindFragment:
		merged, err := mergedConfig(root, c.Base, b.Body)
		if err != nil {
			return "", err
		}
		done, err := validateConfig(bin, root, t.TempDir(), merged, c.FilesElsewhere)
		return "merged, " + done, err
	case kindForeign:
		switch {
		case yamlLangs[b.Lang]:
			return "parses as YAML", parsesAsYAML(b.Body)
		case b.Lang == "properties":
			return "each line is KEY=VALUE", propertiesLines(b.Body)
		}
		return "not checked", nil
	case kindRuns:
		return "bash: exit 0", runShell(bin, root, b.Body)
	case kindRunsEmptyDir:
		return "bash: exit 0", runShell(bin, t.TempDir(), b.Body)
	case kindRunBy:
		if strings.Contains(c.Test, "/") {
			return "run by CI", checkRunBy(root, c.Test, tests)
		}
		return c.Test + " exists", checkRunBy(root, c.Test, tests)
	case kindOutput:
		if b.Lang == "json" {
			return "each line is JSON", jsonLines(b.Body)
		}
		return "output", nil
	case kindIllustrative:
		return "not run", nil
	}
	return "", fmt.Errorf("no check for class %q", c.Kind)
}

// fragmentBases lists the complete files fragments name, each once: they
// must be valid themselves, or a fragment's check would say nothing.
func fragmentBases(blocks []codeBlock) []fragmentBase {
	at := map[string]int{}
	var bases []fragmentBase
	for _, b := range blocks {
		c, err := parseMarker(b.Marker)
		if err != nil || c.Kind != kindFragment {
			continue
		}
		i, ok := at[c.Base]
		if !ok {
			i = len(bases)
			at[c.Base] = i
			bases = append(bases, fragmentBase{Path: c.Base})
		}
		// A fragment whose files live on a server says the same of the
		// file it belongs to.
		bases[i].FilesElsewhere = bases[i].FilesElsewhere || c.FilesElsewhere
	}
	return bases
}

// fragmentBase is a complete file fragments name, and whether it names
// files that exist only where it is deployed.
type fragmentBase struct {
	Path           string
	FilesElsewhere bool
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
