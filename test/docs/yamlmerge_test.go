package docs

import (
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// mergeInto deep-merges a fragment into a complete configuration: maps
// are merged key by key, the fragment's lists and scalars replace the
// base's. The result is the YAML a user gets by pasting the fragment into
// the file.
func mergeInto(base, fragment any) any {
	b, bok := base.(map[string]any)
	f, fok := fragment.(map[string]any)
	if !bok || !fok {
		return fragment
	}
	out := make(map[string]any, len(b)+len(f))
	for k, v := range b {
		out[k] = v
	}
	for k, v := range f {
		if old, ok := out[k]; ok {
			out[k] = mergeInto(old, v)
		} else {
			out[k] = v
		}
	}
	return out
}

// mergedConfig returns the fragment merged into root/baseFile, as YAML.
func mergedConfig(root, baseFile, fragment string) ([]byte, error) {
	baseText, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(baseFile)))
	if err != nil {
		return nil, fmt.Errorf("the fragment's complete file: %w", err)
	}
	var base, frag any
	if err := yaml.Unmarshal(baseText, &base); err != nil {
		return nil, fmt.Errorf("%s: %w", baseFile, err)
	}
	if err := yaml.Unmarshal([]byte(fragment), &frag); err != nil {
		return nil, fmt.Errorf("the fragment is not YAML: %w", err)
	}
	if _, ok := frag.(map[string]any); !ok {
		return nil, fmt.Errorf("the fragment is not a YAML mapping of kproxy's top-level keys")
	}
	return yaml.Marshal(mergeInto(base, frag))
}
