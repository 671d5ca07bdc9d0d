package docs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// errNotInstalled: a block needs a program this machine lacks (bash's
// exit status 127). Outside CI the block is skipped; in CI it fails.
var errNotInstalled = errors.New("a command it runs is not installed")

// shellTimeout bounds one `runs` block.
const shellTimeout = 45 * time.Second

// validated is the inventory's result of a kproxy validate that passed.
const validated = "kproxy validate: ok"

// validateConfig writes a configuration to a new file and runs the real
// binary's kproxy validate on it from the repository root, so files the
// configuration names relative to the root are found. It returns what
// the inventory shows.
func validateConfig(bin, root, dir string, config []byte, skipFiles bool) (string, error) {
	file := filepath.Join(dir, "kproxy.yaml")
	if err := os.WriteFile(file, config, 0o600); err != nil {
		return "", err
	}
	args := []string{"validate", "--config", file}
	if skipFiles {
		args = append(args, "--skip-file-checks")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	cmd.Env = withoutKproxyVariables(os.Environ())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	out := append(stdout, stderr.Bytes()...)
	if err == nil {
		// Warnings (exit 0) are settings a client can sidestep: the
		// inventory shows them, so an example that teaches one is seen.
		if w := strings.TrimSpace(stderr.String()); w != "" {
			return validated + ", " + firstLine(w), nil
		}
		return validated, nil
	}
	// The first line is what kproxy said, for the inventory.
	said := strings.TrimPrefix(strings.TrimSpace(string(out)), "config "+file+": ")
	return "", fmt.Errorf("kproxy validate: %s\n(kproxy %s: %v)\nthe configuration:\n%s", said, strings.Join(args, " "), err, config)
}

// withoutKproxyVariables drops KPROXY_* variables, which would override
// the file's keys.
func withoutKproxyVariables(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "KPROXY_") {
			out = append(out, kv)
		}
	}
	return out
}

// runShell runs a block with bash -euo pipefail in dir, kproxy on PATH
// being the binary under test.
func runShell(bin, dir, script string) error {
	ctx, cancel := context.WithTimeout(context.Background(), shellTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(withoutKproxyVariables(os.Environ()),
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("still running after %s:\n%s", shellTimeout, out.String())
	case errors.As(err, &exit) && exit.ExitCode() == 127:
		return fmt.Errorf("%w: %s\n%s", errNotInstalled, lastLine(out.String()), out.String())
	default:
		return fmt.Errorf("bash -euo pipefail: %v: %s\n%s", err, lastLine(out.String()), out.String())
	}
}

// parsesAsYAML checks every document of a block parses.
func parsesAsYAML(text string) error {
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("not YAML: %w", err)
		}
	}
}

// jsonLines checks every non-blank line of a ```json block is JSON: they
// are log lines, one object each.
func jsonLines(text string) error {
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !json.Valid([]byte(line)) {
			return fmt.Errorf("line %d of the block is not JSON: %s", i+1, line)
		}
	}
	return nil
}

// propertiesLines checks a Java-style properties block: every line that is
// neither blank nor a comment sets KEY=VALUE.
func propertiesLines(text string) error {
	for i, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "!") {
			continue
		}
		if k, _, ok := strings.Cut(t, "="); !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("line %d of the block is not KEY=VALUE: %s", i+1, line)
		}
	}
	return nil
}

var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark|Example)[A-Za-z0-9_]*)\(`)

// testNames lists every test, fuzz target, benchmark and example defined
// in the repository's _test.go files, nested modules included.
func testNames(root string) (map[string]bool, error) {
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			names[m[1]] = true
		}
		return nil
	})
	return names, err
}

// checkRunBy: a `run by` names a test defined in the repository, or a
// script (a path from the root) that CI's .ci/run runs, or .ci/run itself.
func checkRunBy(root, name string, tests map[string]bool) error {
	if !strings.Contains(name, "/") {
		if !tests[name] {
			return fmt.Errorf("no _test.go file in the repository defines %s", name)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(name))); err != nil {
		return fmt.Errorf("run by %s: %w", name, err)
	}
	if name == ".ci/run" {
		return nil
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		return err
	}
	if !strings.Contains(string(ci), name) {
		return fmt.Errorf("run by %s, which .ci/run does not run", name)
	}
	return nil
}

// lastLine is the last non-blank line of a command's output: usually what
// went wrong.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
