package pointer

import (
	"fmt"
	"time"
)

// DefaultNamespace is the first key segment when none is configured.
const DefaultNamespace = "default"

// ObjectKey is KafScale's object key layout:
// <namespace>/<topic>/lfs/<yyyy>/<mm>/<dd>/obj-<id>, the date in UTC and
// id unique (KafScale uses a random UUID).
func ObjectKey(namespace, topic string, at time.Time, id string) string {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	at = at.UTC()
	return fmt.Sprintf("%s/%s/lfs/%04d/%02d/%02d/obj-%s", namespace, topic, at.Year(), int(at.Month()), at.Day(), id)
}
