package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/filter"
	"github.com/rs/zerolog"
)

// limitsSection is a filter's section with a nested list, as a test
// filter declares it.
type limitsSection struct {
	MaxBytes int `yaml:"max_bytes"`
	Rules    []struct {
		Topic string `yaml:"topic"`
	} `yaml:"rules"`
}

func limitsPlugin(reloadable bool) filter.Factory[limitsSection] {
	f := filter.Factory[limitsSection]{
		Section: "limits_filter",
		Keys: []filter.KeyDoc{
			{Key: "", Meaning: "a test filter"},
			{Key: "max_bytes", Meaning: "a bound"},
			{Key: "rules[]", Meaning: "rules"},
			{Key: "rules[].topic", Meaning: "a topic"},
		},
		Validate: func(s *limitsSection, p *filter.Problems) {
			if s.MaxBytes < 0 {
				p.Add("max_bytes", "%d: must be positive", s.MaxBytes)
			}
		},
		New: func(*limitsSection, filter.Env) (filter.Filter, error) { return nil, errors.New("not built here") },
	}
	if reloadable {
		f.Reload = func(filter.Filter, *limitsSection, zerolog.Logger) error { return nil }
	}
	return f
}

func parseWith(t *testing.T, text string, plugins ...filter.Plugin) (*Config, error) {
	t.Helper()
	return ParseWith(strings.NewReader("upstream: {bootstrap_servers: [\"a:1\"]}\n"+text), Extensions{Plugins: plugins})
}

// TestFilterSectionsDecodeAndInherit: a section is decoded into its
// factory's type at the top level and per virtual cluster, and a virtual
// cluster without its own sees the top level's.
func TestFilterSectionsDecodeAndInherit(t *testing.T) {
	cfg, err := parseWith(t, `limits_filter: {max_bytes: 10, rules: [{topic: a}]}
virtual_clusters:
  - {name: a, topic_prefix: a., group_prefix: a., transactional_id_prefix: a., listeners: {bootstrap_port: 9001}}
  - {name: b, topic_prefix: b., group_prefix: b., transactional_id_prefix: b., listeners: {bootstrap_port: 9002}, limits_filter: {max_bytes: 20}}
`, limitsPlugin(false))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, cl := range cfg.Clusters() {
		s, ok := cl.Config.Filters["limits_filter"].(*limitsSection)
		if !ok {
			t.Fatalf("cluster %s: section %#v", cl.Name, cl.Config.Filters["limits_filter"])
		}
		got = append(got, s.MaxBytes)
	}
	if !slices.Equal(got, []int{10, 20}) {
		t.Errorf("max_bytes per virtual cluster %v, want [10 20] (a inherits, b sets its own)", got)
	}
}

// TestFilterSectionErrorsNameTheKey: unknown keys (also in a list inside
// the section), wrong types and Validate's problems are reported under
// the key as written; a section no plugin claims is an unknown key.
func TestFilterSectionErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"unknown key", "limits_filter: {max_byte: 1}", `limits_filter.max_byte: unknown key "max_byte"`},
		{"unknown key in a list", "limits_filter: {rules: [{topic: a}, {topc: b}]}", `limits_filter.rules[1].topc: unknown key "topc"`},
		{"wrong type", "limits_filter: {max_bytes: lots}", "limits_filter.max_bytes: cannot use"},
		{"invalid value", "limits_filter: {max_bytes: -1}", "limits_filter.max_bytes: -1: must be positive"},
		{"invalid in a virtual cluster", "virtual_clusters: [{name: a, listeners: {bootstrap_port: 9001}, limits_filter: {max_bytes: -1}}]",
			"virtual_clusters[0].limits_filter.max_bytes: -1: must be positive"},
		{"unclaimed", "limitz_filter: {}", `limitz_filter: unknown key "limitz_filter"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseWith(t, tc.text, limitsPlugin(false))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestFilterSectionProblemsWithTheRest: a section's invalid value is
// reported together with the file's other problems, all at once.
func TestFilterSectionProblemsWithTheRest(t *testing.T) {
	_, err := parseWith(t, "limits_filter: {max_bytes: -1}\nlog: {level: loud}", limitsPlugin(false))
	for _, want := range []string{"limits_filter.max_bytes: -1: must be positive", `log.level: "loud"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %q", err, want)
		}
	}
}

// TestUnknownKeyWithTypeErrors: a key nobody claims is reported with the
// file's type errors, as yaml's own unknown keys are.
func TestUnknownKeyWithTypeErrors(t *testing.T) {
	_, err := parseWith(t, "listeners: {bootstrap_port: abc}\nlistener: {}", limitsPlugin(false))
	for _, want := range []string{`listeners.bootstrap_port: cannot use "abc"`, `listener: unknown key "listener"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %q", err, want)
		}
	}
}

// TestCheckPlugins: a factory whose section is kproxy's own key, is
// declared twice, or has a key without a reference row is refused,
// naming the problem.
func TestCheckPlugins(t *testing.T) {
	undocumented := limitsPlugin(false)
	undocumented.Keys = undocumented.Keys[:3]
	core := limitsPlugin(false)
	core.Section = "policy"
	for _, tc := range []struct {
		name    string
		plugins []filter.Plugin
		want    string
	}{
		{"documented", []filter.Plugin{limitsPlugin(false)}, ""},
		{"undocumented key", []filter.Plugin{undocumented}, "key limits_filter.rules[].topic (field Topic) has no row"},
		{"core key", []filter.Plugin{core}, `section "policy" is a key of kproxy's own`},
		{"twice", []filter.Plugin{limitsPlugin(false), limitsPlugin(true)}, `section "limits_filter" is declared twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPlugins(tc.plugins)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestRestartNeededForFilterSections: a changed section needs a restart
// unless its factory reloads it; adding or removing one always does.
func TestRestartNeededForFilterSections(t *testing.T) {
	load := func(text string) *Config {
		cfg, err := parseWith(t, text, limitsPlugin(false))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	old := load("limits_filter: {max_bytes: 1}")
	changed := load("limits_filter: {max_bytes: 2}")
	none := load("")
	reloadable := []filter.Plugin{limitsPlugin(true)}
	for _, tc := range []struct {
		name       string
		cur        *Config
		reloadable []filter.Plugin
		want       []string
	}{
		{"changed, not reloadable", changed, nil, []string{"limits_filter"}},
		{"changed, reloadable", changed, reloadable, nil},
		{"removed, reloadable", none, reloadable, []string{"limits_filter"}},
		{"unchanged", old, nil, nil},
		{"policy added, built without its section", load("limits_filter: {max_bytes: 1}\npolicy: {default: allow}"), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := restartNeeded(old, tc.cur, tc.reloadable); !slices.Equal(got, tc.want) {
				t.Errorf("restart needed for %q, want %q", got, tc.want)
			}
		})
	}
}
