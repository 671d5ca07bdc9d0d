// Package sbom writes a software bill of materials for a Go binary in
// SPDX 2.3 JSON: the binary itself, every module its build info records
// (with the go.sum hash as a SHA-256 checksum) and the Go toolchain, each
// with the licences found in its licence files.
package sbom

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Binary is what the build info does not say about a binary.
type Binary struct {
	Name        string    // the document's name, e.g. kproxy_1.2.0_linux_amd64
	Version     string    // the release version, e.g. 1.2.0
	SHA256      string    // hex SHA-256 of the binary file
	FileName    string    // the binary's file name, e.g. kproxy
	Licence     string    // SPDX licence expression of the main module
	Supplier    string    // e.g. "Organization: The kproxy Authors"
	Namespace   string    // URI prefix for the document namespace
	Created     time.Time // when the release was made
	CreatorTool string    // e.g. "kproxy-sbom"
}

// Licences maps a module path to the SPDX identifiers its licence files
// name (internal/licenses).
type Licences map[string][]string

// goLicence is the licence of the Go standard library and runtime.
const goLicence = "BSD-3-Clause"

// New is the SPDX document of a binary with build info info. Every module
// the binary links must have a licence in lic: an SBOM that cannot say a
// module's licence is an error, not NOASSERTION.
func New(info *debug.BuildInfo, bin Binary, lic Licences) (*Document, error) {
	if info == nil {
		return nil, fmt.Errorf("no build info")
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	goos, goarch := settings["GOOS"], settings["GOARCH"]
	mainID := "SPDXRef-Package-" + spdxIDPart(bin.FileName)
	doc := &Document{
		SPDXVersion:       "SPDX-2.3",
		DataLicense:       "CC0-1.0",
		SPDXID:            "SPDXRef-DOCUMENT",
		Name:              bin.Name,
		DocumentNamespace: strings.TrimSuffix(bin.Namespace, "/") + "/" + bin.Name + "-" + bin.SHA256,
		CreationInfo: CreationInfo{
			Created:  bin.Created.UTC().Format(time.RFC3339),
			Creators: []string{"Tool: " + bin.CreatorTool, bin.Supplier},
		},
	}
	mainPurl := fmt.Sprintf("pkg:golang/%s@v%s?goos=%s&goarch=%s", info.Main.Path, bin.Version, goos, goarch)
	doc.Packages = append(doc.Packages, Package{
		SPDXID:                mainID,
		Name:                  bin.FileName,
		VersionInfo:           bin.Version,
		PackageFileName:       bin.FileName,
		Supplier:              bin.Supplier,
		DownloadLocation:      "NOASSERTION",
		FilesAnalyzed:         false,
		Checksums:             []Checksum{{Algorithm: "SHA256", Value: bin.SHA256}},
		LicenseConcluded:      bin.Licence,
		LicenseDeclared:       bin.Licence,
		CopyrightText:         "NOASSERTION",
		PrimaryPackagePurpose: "APPLICATION",
		BuiltDate:             doc.CreationInfo.Created,
		Comment:               fmt.Sprintf("Go program %s of module %s, built with %s", info.Path, info.Main.Path, buildSettings(info.Settings)),
		ExternalRefs:          []ExternalRef{purl(mainPurl)},
	})
	doc.Relationships = append(doc.Relationships, Relationship{"SPDXRef-DOCUMENT", "DESCRIBES", mainID})

	toolchainID := "SPDXRef-Package-go-toolchain"
	doc.Packages = append(doc.Packages, Package{
		SPDXID:           toolchainID,
		Name:             "go",
		VersionInfo:      info.GoVersion,
		Supplier:         "Organization: Google LLC",
		DownloadLocation: "https://go.dev/dl/",
		LicenseConcluded: goLicence,
		LicenseDeclared:  goLicence,
		CopyrightText:    "NOASSERTION",
		Comment:          "The Go toolchain: its standard library and runtime are linked into the binary.",
		ExternalRefs:     []ExternalRef{purl("pkg:golang/stdlib@" + strings.TrimPrefix(info.GoVersion, "go"))},
	})
	doc.Relationships = append(doc.Relationships, Relationship{mainID, "STATIC_LINK", toolchainID})

	var problems []string
	for _, dep := range info.Deps {
		pkg, err := modulePackage(dep, lic)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		doc.Packages = append(doc.Packages, pkg)
		doc.Relationships = append(doc.Relationships, Relationship{mainID, "STATIC_LINK", pkg.SPDXID})
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%d linked modules cannot be described: %s", len(problems), strings.Join(problems, "; "))
	}
	return doc, nil
}

// modulePackage is the SPDX package of one linked module.
func modulePackage(dep *debug.Module, lic Licences) (Package, error) {
	mod, comment := dep, ""
	if dep.Replace != nil {
		mod = dep.Replace
		comment = fmt.Sprintf("Go module %s@%s, replaced by %s@%s. ", dep.Path, dep.Version, mod.Path, mod.Version)
	}
	licences := lic[dep.Path]
	if len(licences) == 0 {
		licences = lic[mod.Path]
	}
	if len(licences) == 0 {
		return Package{}, fmt.Errorf("%s@%s: no known licence", mod.Path, mod.Version)
	}
	expr := strings.Join(slices.Sorted(slices.Values(licences)), " AND ")
	p := Package{
		SPDXID:           "SPDXRef-Package-go-module-" + spdxIDPart(mod.Path+"-"+mod.Version),
		Name:             mod.Path,
		VersionInfo:      mod.Version,
		Supplier:         "NOASSERTION",
		DownloadLocation: "https://proxy.golang.org/" + escapeModulePath(mod.Path) + "/@v/" + mod.Version + ".zip",
		LicenseConcluded: expr,
		LicenseDeclared:  expr,
		CopyrightText:    "NOASSERTION",
		ExternalRefs:     []ExternalRef{purl("pkg:golang/" + mod.Path + "@" + mod.Version)},
	}
	if mod.Sum != "" {
		sum, err := h1SHA256(mod.Sum)
		if err != nil {
			return Package{}, fmt.Errorf("%s@%s: %w", mod.Path, mod.Version, err)
		}
		p.Checksums = []Checksum{{Algorithm: "SHA256", Value: sum}}
		comment += "Go module hash " + mod.Sum + " (go.sum): the checksum is its SHA-256 in hex."
	}
	p.Comment = strings.TrimSpace(comment)
	return p, nil
}

// h1SHA256 is the hex SHA-256 of a go.sum "h1:" hash (base64).
func h1SHA256(sum string) (string, error) {
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		return "", fmt.Errorf("module hash %q is not h1:", sum)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != 32 {
		return "", fmt.Errorf("module hash %q is not a base64 SHA-256", sum)
	}
	return hex.EncodeToString(raw), nil
}

// buildSettings lists the settings that shaped the binary.
func buildSettings(settings []debug.BuildSetting) string {
	var out []string
	for _, s := range settings {
		out = append(out, s.Key+"="+s.Value)
	}
	return strings.Join(out, " ")
}

func purl(locator string) ExternalRef {
	return ExternalRef{Category: "PACKAGE-MANAGER", Type: "purl", Locator: locator}
}

// notIDChar is what an SPDX identifier may not hold (letters, digits, "." and "-" only).
var notIDChar = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

func spdxIDPart(s string) string { return notIDChar.ReplaceAllString(s, "-") }

// escapeModulePath is the module proxy's case encoding: an upper-case
// letter becomes "!" and the lower-case letter.
func escapeModulePath(path string) string {
	var b strings.Builder
	for _, r := range path {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
