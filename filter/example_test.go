package filter_test

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// hideTopic hides one topic from Metadata answers, and closes connections
// that produce to it anyway.
type hideTopic struct{ name string }

func (f hideTopic) Register(r *filter.Registry) {
	filter.OnRequest(r, f.refuseProduce)
	filter.OnResponse(r, f.hide)
}

func (f hideTopic) refuseProduce(_ *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict {
	for _, t := range req.Topics {
		if t.Topic == f.name {
			return filter.Verdict{Close: errors.New("produce to a hidden topic")}
		}
	}
	return filter.Verdict{}
}

func (f hideTopic) hide(resp *kmsg.MetadataResponse) error {
	kept := resp.Topics[:0]
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != f.name {
			kept = append(kept, t)
		}
	}
	resp.Topics = kept
	return nil
}

// A filter registers typed handlers; the engine dispatches by their keys.
func Example() {
	var reg filter.Registry
	hideTopic{name: "payroll"}.Register(&reg)
	for _, h := range reg.Requests() {
		fmt.Println("request", kmsg.NameForKey(h.Key))
	}
	for _, h := range reg.Responses() {
		fmt.Println("response", kmsg.NameForKey(h.Key))
	}
	// Output:
	// request Produce
	// response Metadata
}
