package filter_test

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/kproxy/kproxy/filter"
)

// hiddenTopics is the section of the file the hideTopic filter reads:
//
//	hidden_topics: {name: secret}
type hiddenTopics struct {
	Name string `yaml:"name"`
}

// A filter with its own section: kproxy's loader decodes the section
// (strictly), runs Validate, and calls New for each cluster that has it.
// Here DecodeSection is called by hand, as the loader calls it.
func ExampleFactory() {
	plugin := filter.Factory[hiddenTopics]{
		Section: "hidden_topics",
		Keys: []filter.KeyDoc{
			{Key: "", Meaning: "hide a topic from Metadata answers"},
			{Key: "name", DefaultNote: "required", Meaning: "the topic hidden"},
		},
		Validate: func(s *hiddenTopics, problems *filter.Problems) {
			if s.Name == "" {
				problems.Add("name", "required: the topic to hide")
			}
		},
		New: func(s *hiddenTopics, _ filter.Env) (filter.Filter, error) {
			return hideTopic{name: s.Name}, nil
		},
	}
	_, problems, _ := plugin.DecodeSection(func(into any) error { return yaml.Unmarshal([]byte("{name: ''}"), into) })
	for _, p := range problems {
		fmt.Printf("%s.%s: %s\n", plugin.SectionName(), p.Key, p.Message)
	}
	// Output: hidden_topics.name: required: the topic to hide
}
