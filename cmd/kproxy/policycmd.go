package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/policy"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// Output formats of the policy commands.
const (
	outputText = "text"
	outputJSON = "json"
)

// policyExplainCommand is `kproxy policy explain`: the decision on one
// question, the rule that made it and why every other rule did not.
func policyExplainCommand() command {
	return command{
		name:    "policy explain",
		summary: "explain how the policy decides one request: ALLOW or DENY, the deciding rule, why each other rule did not match, the governance and quotas that apply",
		usage:   "kproxy policy explain --config FILE --principal User:NAME --operation OP (--topic T | --group G | --transactional-id ID | --cluster) [flags]",
		setup: func(fs *flag.FlagSet, c cli) func(context.Context, []string) int {
			path := fs.String("config", "", "path to the YAML configuration `FILE` (required)")
			var spec policy.QuestionSpec
			fs.StringVar(&spec.Principal, "principal", "", "who asks, as `User:NAME` (User:ANONYMOUS without authentication)")
			fs.StringVar(&spec.Operation, "operation", "", "the `OP` as a rule writes it: read, write, create, delete, alter, describe, describe_configs, alter_configs, idempotent_write, cluster_action")
			fs.StringVar(&spec.Topic, "topic", "", "the topic `NAME`")
			fs.StringVar(&spec.Group, "group", "", "the group `NAME`")
			fs.StringVar(&spec.TransactionalID, "transactional-id", "", "the transactional `ID`")
			fs.BoolVar(&spec.Cluster, "cluster", false, "the question is about the cluster resource")
			fs.StringVar(&spec.ClientID, "client-id", "", "the request's client `ID` (client_id: principals)")
			fs.StringVar(&spec.Host, "host", "", "the client's `IP` address (cidr: principals)")
			fs.StringVar(&spec.Listener, "listener", "", "the kproxy listener `NAME` the connection came in on (listener: principals)")
			fs.StringVar(&spec.CN, "cn", "", "the client certificate's common `NAME` (cn: principals)")
			fs.Func("claim", "a token claim `NAME=VALUE` (Claim: principals; repeat for more)", func(s string) error {
				spec.Claims = append(spec.Claims, s)
				return nil
			})
			fs.StringVar(&spec.VirtualCluster, "virtual-cluster", "", "the virtual cluster `NAME` the connection came in on (required with virtual_clusters)")
			output := fs.String("output", outputText, "`FORMAT`: text or json")
			return func(_ context.Context, args []string) int {
				if *path == "" || len(args) > 0 || (*output != outputText && *output != outputJSON) {
					fmt.Fprintf(c.stderr, "%s: want --config FILE, --output text or json, and no arguments (kproxy --help lists every flag)\n", fs.Name())
					return 2
				}
				q, err := spec.Question()
				if err != nil {
					fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
					return 2
				}
				cfg, err := config.Load(*path)
				if err != nil {
					fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
					return 1
				}
				pol, key, err := cfg.ClusterPolicy(spec.VirtualCluster)
				if err != nil {
					fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
					return 2
				}
				checker, err := policy.NewChecker(pol, key)
				if err != nil {
					fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
					return 1
				}
				checker.SetRuleLines(ruleLines(*path, key))
				x := checker.Explain(q)
				if err := writeOutput(c.stdout, *output, &x, x.WriteText); err != nil {
					fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
					return 1
				}
				return 0
			}
		},
	}
}

// policyDiffCommand is `kproxy policy diff OLD NEW`: the access each
// principal gains or loses, per virtual cluster, and the governance and
// quota rules that changed.
func policyDiffCommand() command {
	return command{
		name:    "policy diff",
		summary: "compare the policies of two configuration files: access gained (+) and lost (-) per principal, operation and resource, and governance and quota changes",
		usage:   "kproxy policy diff [--output FORMAT] OLD_FILE NEW_FILE",
		setup: func(fs *flag.FlagSet, c cli) func(context.Context, []string) int {
			output := fs.String("output", outputText, "`FORMAT`: text or json")
			return func(_ context.Context, args []string) int {
				if len(args) != 2 || (*output != outputText && *output != outputJSON) {
					fmt.Fprintf(c.stderr, "%s: want two configuration files, OLD and NEW, and --output text or json\n", fs.Name())
					return 2
				}
				var cfgs [2]*config.Config
				for i, path := range args {
					cfg, err := config.Load(path)
					if err != nil {
						fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
						return 1
					}
					cfgs[i] = cfg
				}
				diffs, err := diffFiles(cfgs[0], cfgs[1])
				if err != nil {
					fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
					return 1
				}
				write := func(w io.Writer) error { return writeDiffs(w, diffs) }
				if err := writeOutput(c.stdout, *output, map[string]any{"clusters": diffs}, write); err != nil {
					fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
					return 1
				}
				return 0
			}
		},
	}
}

// diffFiles diffs the policy of each cluster of either file, matched by
// virtual cluster name; a cluster only one file has is compared with no
// policy, and says so.
func diffFiles(before, after *config.Config) ([]policy.PolicyDiff, error) {
	var names []string
	for _, cfg := range []*config.Config{before, after} {
		for _, cl := range cfg.Clusters() {
			if !contains(names, cl.Name) {
				names = append(names, cl.Name)
			}
		}
	}
	var out []policy.PolicyDiff
	for _, name := range names {
		a, aok := clusterPolicy(before, name)
		b, bok := clusterPolicy(after, name)
		d, err := policy.Diff(a, b, name)
		if err != nil {
			return nil, clusterErr(name, err)
		}
		switch {
		case !aok:
			d.Settings = append([]string{"virtual cluster added"}, d.Settings...)
		case !bok:
			d.Settings = append([]string{"virtual cluster removed"}, d.Settings...)
		}
		out = append(out, d)
	}
	return out, nil
}

// clusterPolicy is the policy cfg gives the cluster name, and whether cfg
// serves that cluster at all. A file without virtual clusters serves only
// "", and a file with them only theirs.
func clusterPolicy(cfg *config.Config, name string) (*policyconfig.Policy, bool) {
	p, _, err := cfg.ClusterPolicy(name)
	return p, err == nil
}

func clusterErr(name string, err error) error {
	if name == "" {
		return err
	}
	return fmt.Errorf("virtual cluster %s: %w", name, err)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// writeDiffs writes each cluster's changes, then a count line.
func writeDiffs(w io.Writer, diffs []policy.PolicyDiff) error {
	var b strings.Builder
	for _, d := range diffs {
		if d.VirtualCluster != "" {
			fmt.Fprintf(&b, "virtual cluster %s:\n", d.VirtualCluster)
		}
		if d.Empty() {
			b.WriteString("no change in access\n")
			continue
		}
		for _, l := range d.Lines() {
			b.WriteString(l + "\n")
		}
		gained, lost := d.Counts()
		fmt.Fprintf(&b, "%d gained, %d lost, %d governance and %d quota changes\n", gained, lost, len(d.Governance), len(d.Quotas))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeOutput writes v as indented JSON, or as text with text.
func writeOutput(w io.Writer, format string, v any, text func(io.Writer) error) error {
	if format == outputText {
		return text(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
