package filter_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// noter notes, under its name, each Metadata request and response it is
// given.
type noter struct {
	name string
	log  *[]string
}

func (n noter) Register(r *filter.Registry) {
	filter.OnRequest(r, func(*filter.Conn, *kmsg.MetadataRequest) filter.Verdict {
		*n.log = append(*n.log, n.name)
		return filter.Verdict{}
	})
	filter.OnResponse(r, func(*kmsg.MetadataResponse) error {
		*n.log = append(*n.log, n.name)
		return nil
	})
}

// Requests pass the phases from the client's side to the cluster's and
// responses back; within a phase, filters keep the order they were added.
func TestChainOrdersHandlersByPhase(t *testing.T) {
	var log []string
	var reg filter.Registry
	reg.Add(
		noter{"program-1", &log},
		filter.At(filter.PhaseNames, noter{"names", &log}),
		filter.At(filter.PhaseAuthorize, noter{"authorize", &log}),
		noter{"program-2", &log},
		filter.At(filter.PhaseAddresses, noter{"addresses", &log}),
	)
	for _, h := range reg.Requests() {
		h.Handle(&filter.Conn{}, kmsg.NewPtrMetadataRequest())
	}
	if got := strings.Join(log, " "); got != "addresses authorize program-1 program-2 names" {
		t.Errorf("requests passed %q", got)
	}
	log = nil
	for _, h := range reg.Responses() {
		if err := h.Handle(kmsg.NewPtrMetadataResponse()); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(log, " "); got != "names program-1 program-2 authorize addresses" {
		t.Errorf("responses passed %q", got)
	}
	var chain []string
	for _, l := range reg.Chain() {
		chain = append(chain, l.String())
	}
	want := "addresses: filter_test.noter, authorize: filter_test.noter, program: filter_test.noter, program: filter_test.noter, names: filter_test.noter"
	if got := strings.Join(chain, ", "); got != want {
		t.Errorf("chain %q, want %q", got, want)
	}
}

// A filter registered without Add, or added without a phase, runs in
// PhaseProgram.
func TestUnplacedFilterRunsInProgramPhase(t *testing.T) {
	var log []string
	if p := filter.PhaseOf(noter{"x", &log}); p != filter.PhaseProgram {
		t.Fatalf("PhaseOf an unplaced filter = %v", p)
	}
	var reg filter.Registry
	noter{"x", &log}.Register(&reg)
	if hs := reg.Requests(); len(hs) != 1 || hs[0].Phase != filter.PhaseProgram {
		t.Fatalf("registered %+v, want one handler in the program phase", hs)
	}
}
