package docs

import (
	"fmt"
	"strings"
)

// The classes a code block can be in, declared by the HTML comment on the
// line just before its opening fence (docs/architecture.md, "Code blocks
// in the documentation").
const (
	kindComplete     = "complete"                   // YAML: a whole kproxy configuration; kproxy validate accepts it
	kindFragment     = "fragment"                   // YAML: merged into a complete file of the repository, then validated
	kindForeign      = "not kproxy configuration"   // another program's configuration: YAML must parse
	kindRuns         = "runs"                       // commands: bash runs them at the repository root
	kindRunsEmptyDir = "runs in an empty directory" // commands that write files: bash runs them in a new directory
	kindRunBy        = "run by"                     // commands a Go test (or a script CI runs) does
	kindIllustrative = "illustrative"               // needs what CI has not, or is a snippet; the reason is required
	kindOutput       = "output"                     // ```text and ```json: what a program printed
)

// filesElsewhere is the suffix of a YAML marker whose files (certificates,
// password files) exist only on another machine, such as a pod's mounted
// Secrets: kproxy validate then runs with --skip-file-checks.
const filesElsewhere = ", files elsewhere"

// blockClass is what a code block's marker (or its language) declares.
type blockClass struct {
	Kind           string
	Base           string // kindFragment: the complete configuration, relative to the repository root
	FilesElsewhere bool   // kindComplete, kindFragment: validate with --skip-file-checks
	Test           string // kindRunBy: a Go test's name, or a script CI runs
	Why            string // kindIllustrative, kindForeign: the reason or the program
}

// String is the class as the inventory shows it.
func (c blockClass) String() string {
	s := c.Kind
	switch c.Kind {
	case kindFragment:
		s += " of " + c.Base
	case kindRunBy:
		s += " " + c.Test
	case kindForeign, kindIllustrative:
		s += ": " + c.Why
	}
	if c.FilesElsewhere {
		s += filesElsewhere
	}
	return s
}

var (
	yamlLangs   = map[string]bool{"yaml": true, "yml": true}
	shellLangs  = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}
	outputLangs = map[string]bool{"text": true, "json": true}
)

// classify reads a block's class from its marker and language, or says
// why the block is in no class and what would be valid.
func classify(b codeBlock) (blockClass, error) {
	c, err := parseMarker(b.Marker)
	if err != nil {
		return c, err
	}
	switch {
	case b.Lang == "":
		return c, fmt.Errorf("the fence names no language: write ```text for output or a diagram, ```sh for commands, ```yaml for configuration")
	case yamlLangs[b.Lang]:
		if c.Kind == "" {
			return blockClass{Kind: kindComplete}, nil
		}
		return c, allow(c, b.Lang, kindComplete, kindFragment, kindForeign)
	case shellLangs[b.Lang]:
		return c, allow(c, b.Lang, kindRuns, kindRunsEmptyDir, kindRunBy, kindIllustrative)
	case outputLangs[b.Lang]:
		if c.Kind == "" {
			return blockClass{Kind: kindOutput}, nil
		}
		return c, allow(c, b.Lang)
	case b.Lang == "go":
		return c, allow(c, b.Lang, kindRunBy, kindIllustrative)
	default:
		return c, allow(c, b.Lang, kindForeign, kindIllustrative)
	}
}

// allow fails unless c is one of kinds for a ```lang block.
func allow(c blockClass, lang string, kinds ...string) error {
	for _, k := range kinds {
		if c.Kind == k {
			return nil
		}
	}
	if len(kinds) == 0 {
		return fmt.Errorf("a ```%s block is output and takes no marker (found <!-- %s -->)", lang, c)
	}
	found := "no marker"
	if c.Kind != "" {
		found = "<!-- " + c.String() + " -->"
	}
	return fmt.Errorf("a ```%s block needs a marker on the line before its fence, one of: %s (found %s)", lang, markerForms(kinds), found)
}

// markerForms spells each kind as it is written in a marker.
func markerForms(kinds []string) string {
	forms := map[string]string{
		kindComplete:     "<!-- complete -->, <!-- complete" + filesElsewhere + " -->",
		kindFragment:     "<!-- fragment of FILE -->, <!-- fragment of FILE" + filesElsewhere + " -->",
		kindForeign:      "<!-- not kproxy configuration: PROGRAM -->",
		kindRuns:         "<!-- runs -->",
		kindRunsEmptyDir: "<!-- runs in an empty directory -->",
		kindRunBy:        "<!-- run by TestName -->, <!-- run by SCRIPT -->",
		kindIllustrative: "<!-- illustrative: WHY -->",
	}
	var out []string
	for _, k := range kinds {
		out = append(out, forms[k])
	}
	return strings.Join(out, ", ")
}

// parseMarker reads a marker's text; "" is no marker.
func parseMarker(m string) (blockClass, error) {
	var c blockClass
	if m == "" {
		return c, nil
	}
	if rest, ok := strings.CutSuffix(m, filesElsewhere); ok {
		c.FilesElsewhere, m = true, rest
	}
	switch {
	case m == kindComplete:
		c.Kind = kindComplete
	case strings.HasPrefix(m, "fragment of "):
		c.Kind, c.Base = kindFragment, strings.TrimSpace(strings.TrimPrefix(m, "fragment of "))
	case strings.HasPrefix(m, kindForeign+":"):
		c.Kind, c.Why = kindForeign, strings.TrimSpace(strings.TrimPrefix(m, kindForeign+":"))
	case m == kindRuns:
		c.Kind = kindRuns
	case m == kindRunsEmptyDir:
		c.Kind = kindRunsEmptyDir
	case strings.HasPrefix(m, "run by "):
		c.Kind, c.Test = kindRunBy, strings.TrimSpace(strings.TrimPrefix(m, "run by "))
	case strings.HasPrefix(m, kindIllustrative+":"):
		c.Kind, c.Why = kindIllustrative, strings.TrimSpace(strings.TrimPrefix(m, kindIllustrative+":"))
	default:
		return c, fmt.Errorf("<!-- %s --> is no marker; valid: %s", m, markerForms([]string{kindComplete, kindFragment, kindForeign, kindRuns, kindRunsEmptyDir, kindRunBy, kindIllustrative}))
	}
	if (c.Kind == kindForeign || c.Kind == kindIllustrative) && c.Why == "" {
		return c, fmt.Errorf("<!-- %s: --> needs its reason after the colon", c.Kind)
	}
	if c.FilesElsewhere && c.Kind != kindComplete && c.Kind != kindFragment {
		return c, fmt.Errorf("%q applies only to complete and fragment YAML", strings.TrimPrefix(filesElsewhere, ", "))
	}
	return c, nil
}
