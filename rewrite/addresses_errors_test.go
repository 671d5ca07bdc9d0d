package rewrite

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAddressesMapperErrorFailsResponse checks that a Mapper failure for any
// one node fails the whole response, with the Mapper's error wrapped and the
// API and node named, for every kind and version that carries addresses.
func TestAddressesMapperErrorFailsResponse(t *testing.T) {
	errNoListener := errors.New("no listener available")
	for _, c := range addressCases {
		if c.cleared {
			continue // clearing never consults the Mapper; see the quorum test
		}
		for _, v := range c.versions() {
			if c.carried(v) == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s/v%d", c.name(), v), func(t *testing.T) {
				src := c.build()
				src.SetVersion(v)
				_, resp := roundTrip(t, src)

				// Node 2 is present in every case, at every version.
				m := &fakeMapper{failFor: map[int32]error{2: errNoListener}}
				err := Addresses{Mapper: m}.FilterResponse(resp)
				if !errors.Is(err, errNoListener) {
					t.Fatalf("FilterResponse error = %v, want wrapping %v", err, errNoListener)
				}
				wantPrefix := fmt.Sprintf("rewrite %s broker 2: ", c.name())
				if !strings.HasPrefix(err.Error(), wantPrefix) {
					t.Fatalf("error %q does not start with %q", err, wantPrefix)
				}
			})
		}
	}
}

func TestAddressesRejectsUnsupported(t *testing.T) {
	tests := []struct {
		name string
		resp kmsg.Response
	}{
		{"ListOffsets", kmsg.NewPtrListOffsetsResponse()},
		{"ApiVersions", kmsg.NewPtrApiVersionsResponse()},
		{"nil", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Addresses{Mapper: &fakeMapper{}}.FilterResponse(tt.resp)
			if err == nil {
				t.Fatal("FilterResponse accepted a response it does not know")
			}
		})
	}
}

func TestAddressesNilMapper(t *testing.T) {
	if err := (Addresses{}).FilterResponse(buildMetadata()); err == nil {
		t.Fatal("FilterResponse with nil Mapper succeeded")
	}
}
