package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// Several runs of the suite can make one matrix. CI runs the kfake column
// in the README's test command (with the race detector), then the suite
// against the real cluster; running every kfake cell a second time there
// would only take CPU from the real cluster's cells. So:
//
//   - KPROXY_CONFORMANCE_UPSTREAMS (a comma-separated list; every upstream
//     when unset) limits which upstreams' cells a run runs;
//   - KPROXY_MATRIX_CELLS names a JSON file of cell results: a run takes
//     from it every cell it did not run itself (left out by
//     KPROXY_CONFORMANCE_UPSTREAMS or by -run), and writes all its cells
//     there at the end.
const (
	upstreamsEnv = "KPROXY_CONFORMANCE_UPSTREAMS"
	cellsEnv     = "KPROXY_MATRIX_CELLS"
)

// savedCell is one cell's result as the cells file keeps it.
type savedCell struct {
	Status  string   `json:"status"`
	Notes   []string `json:"notes,omitempty"`
	Seconds float64  `json:"seconds,omitempty"`
}

// selectedUpstreams is the upstreams this run runs cells against.
func selectedUpstreams() ([]string, error) {
	v := strings.TrimSpace(os.Getenv(upstreamsEnv))
	if v == "" {
		return upstreams, nil
	}
	var sel []string
	for _, u := range strings.Split(v, ",") {
		u = strings.TrimSpace(u)
		if !slices.Contains(upstreams, u) {
			return nil, fmt.Errorf("%s: unknown upstream %q (valid: %s)", upstreamsEnv, u, strings.Join(upstreams, ", "))
		}
		if !slices.Contains(sel, u) {
			sel = append(sel, u)
		}
	}
	return sel, nil
}

// skipUnlessSelected ends a test of one upstream's cells when this run
// leaves that upstream out: its cells come from the cells file.
func skipUnlessSelected(t *testing.T, upstream string) {
	t.Helper()
	selected, err := selectedUpstreams()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(selected, upstream) {
		t.Skipf("%s leaves out %s", upstreamsEnv, upstream)
	}
}

func (k cellKey) String() string { return k.upstream + "/" + k.client + "/" + k.scenario }

// takeCells gives every cell of the matrix that has no result yet the one
// the file at path holds, and says how many it took per upstream and which
// of them failed (a FAIL fails this run too, as the matrix shows it). A
// cell the file does not hold either is an error: the matrix would show a
// cell nobody ran. The file is read only if a cell needs it.
func takeCells(path string) (taken map[string]int, failed []string, err error) {
	matrix.Lock()
	defer matrix.Unlock()
	fillNotRunnable() // they need no earlier run
	var need []cellKey
	for _, u := range upstreams {
		for _, cl := range clients {
			for _, sc := range scenarios {
				k := cellKey{u, cl, sc}
				if r := matrix.cells[k]; r == nil || r.status == "" {
					need = append(need, k)
				}
			}
		}
	}
	if len(need) == 0 {
		return nil, nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %d cells did not run here (first: %s) and no earlier run's are at hand: %w", cellsEnv, len(need), need[0], err)
	}
	var saved map[string]savedCell
	if err := json.Unmarshal(b, &saved); err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", cellsEnv, path, err)
	}
	var missing []string
	taken = map[string]int{}
	for _, k := range need {
		c, ok := saved[k.String()]
		if !ok || c.Status == "" {
			missing = append(missing, k.String())
			continue
		}
		matrix.cells[k] = &cellResult{status: c.Status, notes: c.Notes, dur: time.Duration(c.Seconds * float64(time.Second))}
		taken[k.upstream]++
		if c.Status == fail {
			failed = append(failed, k.String())
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("%s: %d cells did not run here and %s holds no result for them (first: %s)", cellsEnv, len(missing), path, missing[0])
	}
	return taken, failed, nil
}

// takenNote says, for the matrix's first line, which cells came from path.
func takenNote(path string, taken map[string]int) string {
	if len(taken) == 0 {
		return ""
	}
	var per []string
	for _, u := range upstreams {
		if n := taken[u]; n > 0 {
			per = append(per, fmt.Sprintf("%s %d", u, n))
		}
	}
	return fmt.Sprintf("; cells of earlier runs, from %s: %s", path, strings.Join(per, ", "))
}

// saveCells writes every cell of the matrix to path.
func saveCells(path string) error {
	matrix.Lock()
	saved := make(map[string]savedCell, len(matrix.cells))
	for k, r := range matrix.cells {
		saved[k.String()] = savedCell{Status: r.status, Notes: r.notes, Seconds: r.dur.Seconds()}
	}
	matrix.Unlock()
	b, err := json.MarshalIndent(saved, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
