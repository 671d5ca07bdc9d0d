package rewrite

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDescribeQuorumClearsListeners checks that controller listeners are
// removed without consulting the Mapper (a failing one must not matter),
// while node ids and replica state are kept.
func TestDescribeQuorumClearsListeners(t *testing.T) {
	for v := int16(0); v <= kmsg.NewPtrDescribeQuorumResponse().MaxVersion(); v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			src := buildDescribeQuorum()
			src.SetVersion(v)
			_, resp := roundTrip(t, src)
			r := resp.(*kmsg.DescribeQuorumResponse)
			wantTopics := r.Topics

			m := &fakeMapper{failFor: map[int32]error{1: errors.New("x"), 2: errors.New("x"), 3: errors.New("x")}}
			if err := (Addresses{Mapper: m}).FilterResponse(r); err != nil {
				t.Fatalf("FilterResponse: %v", err)
			}
			_, final := roundTrip(t, r)
			f := final.(*kmsg.DescribeQuorumResponse)

			var wantNodes []int32
			if v >= 2 {
				wantNodes = testNodes
			}
			var gotNodes []int32
			for _, n := range f.Nodes {
				gotNodes = append(gotNodes, n.NodeID)
				if len(n.Listeners) != 0 {
					t.Errorf("node %d still has listeners %+v", n.NodeID, n.Listeners)
				}
			}
			if !reflect.DeepEqual(gotNodes, wantNodes) {
				t.Errorf("node ids = %v, want %v", gotNodes, wantNodes)
			}
			if !reflect.DeepEqual(f.Topics, wantTopics) {
				t.Errorf("topics changed:\n got %+v\nwant %+v", f.Topics, wantTopics)
			}
		})
	}
}
