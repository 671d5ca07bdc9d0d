package sbom_test

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/sbom"
)

func buildInfo() *debug.BuildInfo {
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "github.com/kproxy/kproxy/cmd/kproxy",
		Main:      debug.Module{Path: "github.com/kproxy/kproxy", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/twmb/franz-go/pkg/kmsg", Version: "v1.15.1", Sum: "h1:3sj7ekbH33t73nsBcHS0wtp/PyMIViHLNItZrE8V9zM="},
			{Path: "github.com/klauspost/compress", Version: "v1.20.3", Sum: "h1:zWNoFqq/lSuYQRim3dUXlXeA0IqwuZGicdG5ZTfY5j4="},
			{Path: "example.com/Forked", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1"}},
		},
		Settings: []debug.BuildSetting{{Key: "GOOS", Value: "darwin"}, {Key: "GOARCH", Value: "arm64"}, {Key: "CGO_ENABLED", Value: "0"}},
	}
}

func binary() sbom.Binary {
	return sbom.Binary{
		Name: "kproxy_1.2.0_darwin_arm64", Version: "1.2.0", SHA256: strings.Repeat("ab", 32), FileName: "kproxy",
		Licence: "Apache-2.0", Supplier: "Organization: The kproxy Authors", Namespace: "https://example.com/spdx/",
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), CreatorTool: "kproxy-sbom",
	}
}

var licences = sbom.Licences{
	"github.com/twmb/franz-go/pkg/kmsg": {"BSD-3-Clause"},
	"github.com/klauspost/compress":     {"MIT", "Apache-2.0", "BSD-3-Clause"},
	"example.com/Forked":                {"ISC"},
}

// TestDocument: the document names the binary with its checksum, every
// module with its version, go.sum hash as hex SHA-256 and licences, and
// the Go toolchain, each linked from the binary.
func TestDocument(t *testing.T) {
	doc, err := sbom.New(buildInfo(), binary(), licences)
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, as a reader sees it.
	text, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var got sbom.Document
	if err := json.Unmarshal(text, &got); err != nil {
		t.Fatal(err)
	}
	if got.SPDXVersion != "SPDX-2.3" || got.DataLicense != "CC0-1.0" || got.SPDXID != "SPDXRef-DOCUMENT" {
		t.Errorf("header %q %q %q", got.SPDXVersion, got.DataLicense, got.SPDXID)
	}
	if got.CreationInfo.Created != "2026-01-02T02:04:05Z" {
		t.Errorf("created %q, want the time in UTC", got.CreationInfo.Created)
	}
	if want := "https://example.com/spdx/kproxy_1.2.0_darwin_arm64-" + strings.Repeat("ab", 32); got.DocumentNamespace != want {
		t.Errorf("namespace %q, want %q", got.DocumentNamespace, want)
	}
	byName := map[string]sbom.Package{}
	for _, p := range got.Packages {
		byName[p.Name] = p
	}
	for name, want := range map[string]struct{ version, licence, sha256, purl string }{
		"kproxy": {"1.2.0", "Apache-2.0", strings.Repeat("ab", 32), "pkg:golang/github.com/kproxy/kproxy@v1.2.0?goos=darwin&goarch=arm64"},
		"go":     {"go1.26.8", "BSD-3-Clause", "", "pkg:golang/stdlib@1.26.8"},
		// base64 3sj7… is hex dec8…
		"github.com/twmb/franz-go/pkg/kmsg": {"v1.15.1", "BSD-3-Clause", "dec8fb7a46c7df7b7bde7b017074b4c2da7f3f23085621cb348b59ac4f15f733", "pkg:golang/github.com/twmb/franz-go/pkg/kmsg@v1.15.1"},
		"github.com/klauspost/compress":     {"v1.20.3", "Apache-2.0 AND BSD-3-Clause AND MIT", "", "pkg:golang/github.com/klauspost/compress@v1.20.3"},
		"example.com/fork":                  {"v1.0.1", "ISC", "", "pkg:golang/example.com/fork@v1.0.1"},
	} {
		p, ok := byName[name]
		if !ok {
			t.Errorf("no package %s", name)
			continue
		}
		if p.VersionInfo != want.version || p.LicenseConcluded != want.licence || p.LicenseDeclared != want.licence {
			t.Errorf("%s: version %q licence %q/%q, want %q %q", name, p.VersionInfo, p.LicenseConcluded, p.LicenseDeclared, want.version, want.licence)
		}
		if want.sha256 != "" && (len(p.Checksums) != 1 || p.Checksums[0].Algorithm != "SHA256" || p.Checksums[0].Value != want.sha256) {
			t.Errorf("%s: checksums %+v, want SHA256 %s", name, p.Checksums, want.sha256)
		}
		if len(p.ExternalRefs) != 1 || p.ExternalRefs[0].Locator != want.purl {
			t.Errorf("%s: external refs %+v, want purl %s", name, p.ExternalRefs, want.purl)
		}
		if !strings.HasPrefix(p.SPDXID, "SPDXRef-") || strings.ContainsAny(p.SPDXID, "/@_") {
			t.Errorf("%s: SPDXID %q has characters SPDX does not allow", name, p.SPDXID)
		}
	}
	if c := byName["example.com/fork"].Comment; !strings.Contains(c, "example.com/Forked@v1.0.0") {
		t.Errorf("replaced module's comment %q does not name what it replaces", c)
	}
	if dl := byName["example.com/fork"].DownloadLocation; dl != "https://proxy.golang.org/example.com/fork/@v/v1.0.1.zip" {
		t.Errorf("download location %q", dl)
	}

	main := byName["kproxy"].SPDXID
	rels := map[string]bool{}
	for _, r := range got.Relationships {
		rels[r.Element+" "+r.Type+" "+r.Related] = true
	}
	if !rels["SPDXRef-DOCUMENT DESCRIBES "+main] {
		t.Errorf("the document does not describe the binary: %v", rels)
	}
	for name, p := range byName {
		if name != "kproxy" && !rels[main+" STATIC_LINK "+p.SPDXID] {
			t.Errorf("the binary does not link %s: %v", name, rels)
		}
	}
}

// TestUnknownLicenceIsAnError: a linked module whose licence is not known
// fails the document, naming the module.
func TestUnknownLicenceIsAnError(t *testing.T) {
	lic := sbom.Licences{"github.com/twmb/franz-go/pkg/kmsg": {"BSD-3-Clause"}}
	_, err := sbom.New(buildInfo(), binary(), lic)
	if err == nil {
		t.Fatal("no error for modules without a licence")
	}
	for _, want := range []string{"github.com/klauspost/compress@v1.20.3", "example.com/fork@v1.0.1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestBadModuleHash: a go.sum hash that is not h1 base64 SHA-256 is an
// error, not a wrong checksum.
func TestBadModuleHash(t *testing.T) {
	info := buildInfo()
	info.Deps[0].Sum = "h2:abc"
	if _, err := sbom.New(info, binary(), licences); err == nil || !strings.Contains(err.Error(), "h2:abc") {
		t.Errorf("error %v, want one naming the hash h2:abc", err)
	}
}
