package rewrite

import "testing"

// TestAddressesFilterDoesNotAllocate pins down that the rewrite itself adds
// nothing to the per-response cost beyond what the Mapper does: the decode
// and encode around it are kmsg's, the filter only overwrites fields.
func TestAddressesFilterDoesNotAllocate(t *testing.T) {
	resp := buildMetadata()
	resp.SetVersion(resp.MaxVersion())
	filter := Addresses{Mapper: constMapper{}}
	allocs := testing.AllocsPerRun(100, func() {
		if err := filter.FilterResponse(resp); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("FilterResponse allocated %.1f times per call, want 0", allocs)
	}
}
