package tlsconfig

import (
	"os"
	"slices"
	"time"
)

// fileStamp is what tells a changed file from an unchanged one without
// reading it: modification time and size. A missing or unreadable file has
// a zero stamp with missing set, so that its reappearance is a change.
type fileStamp struct {
	modTime time.Time
	size    int64
	missing bool
}

// stampFiles stamps each path.
func stampFiles(paths ...string) []fileStamp {
	stamps := make([]fileStamp, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			// Any stat failure reads as "missing": the load that follows
			// reports the real error.
			stamps[i] = fileStamp{missing: true}
			continue
		}
		stamps[i] = fileStamp{modTime: fi.ModTime(), size: fi.Size()}
	}
	return stamps
}

func sameStamps(a, b []fileStamp) bool {
	return slices.EqualFunc(a, b, func(x, y fileStamp) bool {
		return x.missing == y.missing && x.size == y.size && x.modTime.Equal(y.modTime)
	})
}
