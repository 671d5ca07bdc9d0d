package auth

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ResolveSecret returns a secret given in exactly one of three ways: the
// literal value, the path of a file holding it (one trailing newline, LF
// or CRLF, is removed, as editors and `echo` add one), or the name of an
// environment variable holding it. An empty secret is an error. Errors name
// the file or variable, never the value.
func ResolveSecret(value, file, env string) (string, error) {
	set := 0
	for _, s := range []string{value, file, env} {
		if s != "" {
			set++
		}
	}
	switch {
	case set == 0:
		return "", errors.New("secret: none given (set the value, a file or an environment variable)")
	case set > 1:
		return "", errors.New("secret: give exactly one of the value, a file or an environment variable")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			// The *PathError names the file; it carries no content.
			return "", fmt.Errorf("secret file: %w", err)
		}
		s := string(b)
		if t, ok := strings.CutSuffix(s, "\n"); ok {
			s = strings.TrimSuffix(t, "\r")
		}
		if s == "" {
			return "", fmt.Errorf("secret file %s: empty", file)
		}
		return s, nil
	case env != "":
		s, ok := os.LookupEnv(env)
		if !ok {
			return "", fmt.Errorf("secret environment variable %s: not set", env)
		}
		if s == "" {
			return "", fmt.Errorf("secret environment variable %s: empty", env)
		}
		return s, nil
	}
	return value, nil
}
