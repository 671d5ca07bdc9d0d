package docs

import (
	"regexp"
	"strings"
)

// caFileReadAtLoad matches what kproxy validate says when it reads a CA
// file while loading the configuration: jwks_ca_file and
// token_endpoint_ca_file are read there, before the file checks that
// --skip-file-checks leaves out, so the flag does not skip them.
var caFileReadAtLoad = regexp.MustCompile(`((?:listeners\.sasl\.oauthbearer\.jwks_ca_file|upstream\.sasl\.token_endpoint_ca_file)): load CA file: open (/[^:]+): no such file or directory`)

// onlyCAFilesReadAtLoad reports whether every complaint in validate's
// output is one of those CA files, at a path the block names, and which
// keys they were. Anything else in the output is a real failure.
func onlyCAFilesReadAtLoad(output, block string) (keys []string, ok bool) {
	for _, line := range strings.Split(strings.TrimSpace(output), "\n") {
		m := caFileReadAtLoad.FindStringSubmatch(line)
		if m == nil || !strings.Contains(block, m[2]) {
			return nil, false
		}
		keys = append(keys, m[1])
	}
	return keys, len(keys) > 0
}
