package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/kproxy/kproxy/internal/config"
)

// configDocCommand is `kproxy config schema|defaults`: it prints what the
// code knows of the configuration file, for editors and for starting one.
func configDocCommand() command {
	return command{
		name:    "config",
		summary: "print the configuration file's JSON Schema (config schema) or every key at its default (config defaults)",
		usage: `kproxy config schema | kproxy config defaults

  schema    a JSON Schema (draft 2020-12) of the configuration file, for
            editors: kproxy config schema > kproxy.schema.json, then put
            # yaml-language-server: $schema=kproxy.schema.json
            at the top of the YAML file
  defaults  a whole configuration file with every key at its default and
            a comment saying what it does; sections and list entries that
            turn something on are commented out`,
		setup: func(_ *flag.FlagSet, c cli) func(context.Context, []string) int {
			return func(_ context.Context, args []string) int {
				if len(args) != 1 {
					fmt.Fprintln(c.stderr, "kproxy config: want one of schema, defaults (kproxy config --help)")
					return 2
				}
				switch args[0] {
				case "schema":
					schema, err := config.Schema()
					if err != nil {
						fmt.Fprintf(c.stderr, "kproxy config schema: %v\n", err)
						return 1
					}
					c.stdout.Write(schema)
				case "defaults":
					c.stdout.Write(config.DefaultsYAML())
				default:
					fmt.Fprintf(c.stderr, "kproxy config: unknown %q: want schema or defaults\n", args[0])
					return 2
				}
				return 0
			}
		},
	}
}
