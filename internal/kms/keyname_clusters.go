package kms

import (
	"fmt"
	"strings"
)

// KeyUse is a `key:` template as one virtual cluster uses it (its own or
// the top-level one it inherits).
type KeyUse struct {
	Path           string // configuration key, e.g. virtual_clusters[1].encryption.topics[0].key
	VirtualCluster string
	Template       KeyTemplate
}

// ValidateClusterKeys refuses templates through which topics of two
// virtual clusters could land on the same KMS key: each cluster would read
// the other's records. It holds the names one template gives in one
// cluster to the part fixed before $(topic) (the prefix), and accepts
// when the prefixes of every two clusters differ at a byte both have:
// their names then differ there too. $(virtual_cluster) followed by '/',
// or a literal prefix per cluster, passes.
func ValidateClusterKeys(uses []KeyUse) error {
	type fixed struct {
		prefix string
		open   bool // a topic follows the prefix; else it is the whole name
	}
	prefixes := make([]fixed, len(uses))
	for i, u := range uses {
		prefixes[i].prefix, prefixes[i].open = u.Template.prefix(u.VirtualCluster)
	}
	for i, a := range uses {
		for j := i + 1; j < len(uses); j++ {
			b := uses[j]
			if a.VirtualCluster == b.VirtualCluster {
				continue
			}
			if mayOverlap(prefixes[i].prefix, prefixes[i].open, prefixes[j].prefix, prefixes[j].open) {
				return fmt.Errorf("%s %q: virtual clusters %q and %q could use the same KMS key (with %s %q): start the key with a part of its own per cluster, e.g. alias/%s/...",
					b.Path, b.Template, b.VirtualCluster, a.VirtualCluster, a.Path, a.Template, VirtualClusterPlaceholder)
			}
		}
	}
	return nil
}

// mayOverlap tells whether a name starting with (open) or equal to (not
// open) p could start with or equal q: a topic name is never empty, so an
// open prefix is always followed by at least one byte.
func mayOverlap(p string, pOpen bool, q string, qOpen bool) bool {
	switch {
	case pOpen && qOpen:
		return strings.HasPrefix(p, q) || strings.HasPrefix(q, p)
	case pOpen:
		return len(q) > len(p) && strings.HasPrefix(q, p)
	case qOpen:
		return len(p) > len(q) && strings.HasPrefix(p, q)
	default:
		return p == q
	}
}
