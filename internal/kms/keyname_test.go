package kms_test

import (
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/kms"
)

func TestEscapeKeyName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"payments", "payments"},
		{"payments.cards", "payments-cards"},
		{"payments-cards", "payments_-cards"},
		{"payments_cards", "payments__cards"},
		{"a.b-c_d.E9", "a-b_-c__d-E9"},
		{"x/y", "x_2fy"},
		{"é", "_c3_a9"},
		{"", ""},
	} {
		if got := kms.EscapeKeyName(c.in); got != c.want {
			t.Errorf("EscapeKeyName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestEscapeKeyNameIsInjective: every name of up to 6 bytes over the
// bytes that make escapes ambiguous has an escape of its own, made only of
// alias-name bytes and without '/'.
func TestEscapeKeyNameIsInjective(t *testing.T) {
	t.Parallel()
	const alphabet = "a.-_2f/"
	seen := map[string]string{}
	var walk func(prefix string)
	walk = func(prefix string) {
		esc := kms.EscapeKeyName(prefix)
		if other, ok := seen[esc]; ok {
			t.Fatalf("%q and %q both escape to %q", other, prefix, esc)
		}
		seen[esc] = prefix
		if strings.Trim(esc, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Fatalf("%q escapes to %q, outside alias syntax or with '/'", prefix, esc)
		}
		if len(prefix) < 6 {
			for i := range len(alphabet) {
				walk(prefix + alphabet[i:i+1])
			}
		}
	}
	walk("")
	t.Logf("%d names, %d distinct escapes", len(seen), len(seen))
}

func TestKeyTemplateName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ template, vc, topic, want string }{
		{"alias/kek-$(topic)", "", "payments.cards", "alias/kek-payments-cards"},
		{"alias/kek-$(topic)", "", "payments-cards", "alias/kek-payments_-cards"},
		{"alias/$(virtual_cluster)/$(topic)", "team.a", "orders", "alias/team-a/orders"},
		{"alias/fixed", "a", "orders", "alias/fixed"},
		{"arn:aws:kms:eu-west-1:111122223333:alias/$(topic)", "", "t", "arn:aws:kms:eu-west-1:111122223333:alias/t"},
		{"alias/$(topic)$(topic)", "", "a.b", "alias/a-ba-b"},
	} {
		tmpl, err := kms.ParseKeyTemplate("encryption.topics[0].key", c.template)
		if err != nil {
			t.Fatalf("%q: %v", c.template, err)
		}
		if got := tmpl.Name(c.vc, c.topic); got != c.want {
			t.Errorf("%q with virtual cluster %q, topic %q = %q, want %q", c.template, c.vc, c.topic, got, c.want)
		}
	}
}

func TestParseKeyTemplateRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ template, want string }{
		{"", `encryption.topics[0].key: empty key`},
		{"alias/kek-${topic}", `encryption.topics[0].key "alias/kek-${topic}": "$" is not allowed`},
		{"alias/kek-$(topics)", `encryption.topics[0].key "alias/kek-$(topics)": unknown placeholder at "$(topics)"`},
		{"alias/kek-$(topic", `unknown placeholder at "$(topic"`},
		{"alias/kek.$(topic)", `"." is not allowed in a key name`},
		{"alias/kek $(topic)", `" " is not allowed in a key name`},
	} {
		_, err := kms.ParseKeyTemplate("encryption.topics[0].key", c.template)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.template, err, c.want)
		}
	}
}

func TestValidateClusterKeys(t *testing.T) {
	t.Parallel()
	use := func(vc, template string) kms.KeyUse {
		path := "virtual_clusters[" + vc + "].encryption.topics[0].key"
		tmpl, err := kms.ParseKeyTemplate(path, template)
		if err != nil {
			t.Fatal(err)
		}
		return kms.KeyUse{Path: path, VirtualCluster: vc, Template: tmpl}
	}
	for _, c := range []struct {
		name string
		uses []kms.KeyUse
		want string // "" for accepted
	}{
		{"one cluster", []kms.KeyUse{use("a", "alias/kek-$(topic)")}, ""},
		{"cluster name then slash", []kms.KeyUse{use("a", "alias/$(virtual_cluster)/$(topic)"), use("a.b", "alias/$(virtual_cluster)/$(topic)"), use("ab", "alias/$(virtual_cluster)/$(topic)")}, ""},
		{"fixed prefixes of their own", []kms.KeyUse{use("a", "alias/team-a/$(topic)"), use("b", "alias/team-b/$(topic)")}, ""},
		{"one fixed key each", []kms.KeyUse{use("a", "alias/a-kek"), use("b", "alias/b-kek")}, ""},
		{"two rules of one cluster on one key", []kms.KeyUse{use("a", "alias/a-kek"), use("a", "alias/a-kek")}, ""},
		{"shared template without the cluster", []kms.KeyUse{use("a", "alias/kek-$(topic)"), use("b", "alias/kek-$(topic)")},
			`virtual_clusters[b].encryption.topics[0].key "alias/kek-$(topic)": virtual clusters "b" and "a" could use the same KMS key`},
		{"one fixed key for both", []kms.KeyUse{use("a", "alias/kek"), use("b", "alias/kek")}, `virtual clusters "b" and "a"`},
		{"fixed key one of the other's names", []kms.KeyUse{use("a", "alias/kek-$(topic)"), use("b", "alias/kek-orders")}, `virtual clusters "b" and "a"`},
		{"one prefix extends the other", []kms.KeyUse{use("a", "alias/team-a-$(topic)"), use("b", "alias/team-a-x-$(topic)")}, `virtual clusters "b" and "a"`},
		// a's topic b.c and a.b's topic c both give alias/a-b-c.
		{"cluster name then a dash", []kms.KeyUse{use("a", "alias/$(virtual_cluster)-$(topic)"), use("a.b", "alias/$(virtual_cluster)-$(topic)")}, `virtual clusters "a.b" and "a"`},
		{"cluster name after the topic", []kms.KeyUse{use("a", "alias/$(topic)-$(virtual_cluster)"), use("b", "alias/$(topic)-$(virtual_cluster)")}, `could use the same KMS key`},
	} {
		err := kms.ValidateClusterKeys(c.uses)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
}
