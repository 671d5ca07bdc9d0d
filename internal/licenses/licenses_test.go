package licenses_test

import (
	"flag"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit/golden"

	"github.com/kproxy/kproxy/internal/licenses"
)

var update = flag.Bool("update", false, "rewrite THIRD_PARTY_LICENSES.md")

// root is the repository root: two up from this package.
const root = "../.."

// TestThirdPartyLicensesFile: every module the binary links has a
// permissive licence, and THIRD_PARTY_LICENSES.md lists exactly them.
func TestThirdPartyLicensesFile(t *testing.T) {
	mods, err := licenses.Linked(root, "./cmd/kproxy")
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) == 0 {
		t.Fatal("go list named no linked module")
	}
	for _, p := range licenses.Problems(mods) {
		t.Error(p)
	}
	want := licenses.Render(mods)
	golden.Check(t, filepath.Join(root, "THIRD_PARTY_LICENSES.md"), want, *update, "go test ./internal/licenses -run TestThirdPartyLicensesFile -update")
}

// TestClassify: each licence is told by its own text, and a copyleft or
// missing licence is a problem.
func TestClassify(t *testing.T) {
	for text, want := range map[string][]string{
		"Apache License\n   Version 2.0, January 2004":                                                           {"Apache-2.0"},
		"Permission is hereby granted, free of charge, to any person obtaining a copy of this software":          {"MIT"},
		"Redistribution and use in source and binary forms, with or without ... Neither the name of Google Inc.": {"BSD-3-Clause"},
		"Redistribution and use in source and binary forms, with or without modification, are permitted":         {"BSD-2-Clause"},
		"GNU GENERAL PUBLIC LICENSE Version 3":                                                                   {"GPL"},
		"Mozilla Public License Version 2.0":                                                                     {"MPL-2.0"},
		"All rights reserved.":                                                                                   nil,
	} {
		if got := licenses.Classify(text); !slices.Equal(got, want) {
			t.Errorf("Classify(%q) = %v, want %v", text, got, want)
		}
	}
	problems := licenses.Problems([]licenses.Module{
		{Path: "a", Files: []string{"LICENSE"}, Licences: []string{"GPL"}},
		{Path: "b"},
		{Path: "c", Files: []string{"LICENSE"}},
		{Path: "d", Files: []string{"LICENSE"}, Licences: []string{"MIT"}},
	})
	if len(problems) != 3 {
		t.Errorf("problems %q, want one each for a, b and c", problems)
	}
}

// TestLinkedForPlatform: the modules linked depend on the platform, so a
// binary's licences are listed for its own GOOS: procfs is linux-only.
func TestLinkedForPlatform(t *testing.T) {
	has := func(goos string) bool {
		mods, err := licenses.LinkedFor(root, "./cmd/kproxy", "GOOS="+goos, "GOARCH=arm64", "CGO_ENABLED=0")
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(mods, func(m licenses.Module) bool { return m.Path == "github.com/prometheus/procfs" })
	}
	if !has("linux") || has("darwin") {
		t.Errorf("github.com/prometheus/procfs linked on linux %v, on darwin %v; want linux only", has("linux"), has("darwin"))
	}
}
