package main

import (
	"path"
	"strconv"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// Section is the filter's own block of kproxy's configuration file, at
// the top level or in a virtual cluster:
//
//	require_header:
//	  name: trace-id
//	  topics: [orders, "payments-*"]
type Section struct {
	// Name is the record header every produced record must carry.
	Name string `yaml:"name"`
	// Topics are path.Match globs of the topics it applies to; empty: all.
	Topics []string `yaml:"topics"`
}

// Plugin declares the require_header section: kproxy decodes and checks
// it, builds one filter per cluster that has it, and hands the filters a
// changed section on SIGHUP or a change to the file.
func Plugin() filter.Plugin {
	return filter.Factory[Section]{
		Section: "require_header",
		Keys: []filter.KeyDoc{
			{Key: "", Meaning: "refuse produced records that lack a header, with `INVALID_RECORD`; in a virtual cluster, replaces the top level's; SIGHUP or an edit of the file reloads it"},
			{Key: "name", DefaultNote: "required", Meaning: "the record header every produced record must carry"},
			{Key: "topics", DefaultNote: "every topic", Meaning: "topic names or globs (`*`, `?`, `[...]`) the header is required on"},
		},
		Validate: validateSection,
		New: func(s *Section, _ filter.Env) (filter.Filter, error) {
			f := &reloadable{}
			f.apply(s)
			return f, nil
		},
		Reload: func(f filter.Filter, s *Section, _ zerolog.Logger) error {
			f.(*reloadable).apply(s)
			return nil
		},
	}
}

// validateSection names each invalid key; kproxy prefixes the section's
// place (require_header, or virtual_clusters[i].require_header).
func validateSection(s *Section, problems *filter.Problems) {
	if s.Name == "" {
		problems.Add("name", "required: the record header every produced record must carry")
	}
	for i, pattern := range s.Topics {
		if _, err := path.Match(pattern, ""); err != nil || pattern == "" {
			problems.Add("topics["+strconv.Itoa(i)+"]", "%q is not a topic name or glob (*, ?, [...])", pattern)
		}
	}
}

// reloadable is RequireHeader whose settings a reload swaps: requests
// already in a handler finish with the settings they started with. The
// topic names it learnt stay.
type reloadable struct {
	current atomic.Pointer[RequireHeader]
	names   filter.TopicNames
}

// Register makes f see every Produce request, and the Metadata responses
// that name the topic ids produce requests carry.
func (f *reloadable) Register(r *filter.Registry) {
	filter.OnRequest(r, f.produce)
	filter.OnResponse(r, f.names.Learn)
}

// apply puts s in force for the next request.
func (f *reloadable) apply(s *Section) {
	f.current.Store(&RequireHeader{Header: s.Name, Topics: s.Topics, names: &f.names})
}

func (f *reloadable) produce(c *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict {
	return f.current.Load().produce(c, req)
}
