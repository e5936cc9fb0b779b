// Command sbom writes an SPDX 2.3 JSON software bill of materials of a Go
// binary from the module information the Go toolchain embeds in it
// (debug/buildinfo): the main module at the release's version, every
// module linked in (replacements resolved) and the Go standard library.
//
//	go run ./hack/sbom -version v1.2.3 dist/regatta-linux-amd64 > regatta-linux-amd64.spdx.json
package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

func main() {
	version := flag.String("version", "", "the main module's version (a binary built from a checkout says (devel))")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: sbom [-version vX.Y.Z] BINARY")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), *version); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, binary, version string) error {
	bi, err := buildinfo.ReadFile(binary)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	doc := document(bi, filepath.Base(binary), version, hex.EncodeToString(sum[:]), created())
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// created is $SOURCE_DATE_EPOCH (the commit's date in a release), so the
// document of one commit is always the same; else now.
func created() time.Time {
	if s, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64); err == nil {
		return time.Unix(s, 0).UTC()
	}
	return time.Now().UTC().Truncate(time.Second)
}

// The SPDX 2.3 JSON document, the fields this generator fills.
type spdxDoc struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      creationInfo   `json:"creationInfo"`
	DocumentDescribes []string       `json:"documentDescribes"`
	Packages          []spdxPackage  `json:"packages"`
	Relationships     []relationship `json:"relationships"`
}

type creationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	Name             string        `json:"name"`
	SPDXID           string        `json:"SPDXID"`
	VersionInfo      string        `json:"versionInfo"`
	DownloadLocation string        `json:"downloadLocation"`
	FilesAnalyzed    bool          `json:"filesAnalyzed"`
	Checksums        []checksum    `json:"checksums,omitempty"`
	ExternalRefs     []externalRef `json:"externalRefs,omitempty"`
	Comment          string        `json:"comment,omitempty"`
}

type checksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

type externalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type relationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

var notIDChars = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

func spdxID(kind, name string) string {
	return "SPDXRef-" + kind + "-" + notIDChars.ReplaceAllString(name, "-")
}

// document builds the SPDX document of the binary named name.
func document(bi *buildinfo.BuildInfo, name, version, sha string, at time.Time) spdxDoc {
	if version == "" {
		version = bi.Main.Version
	}
	main := goPackage(bi.Main.Path, version, "Package-main")
	main.Checksums = []checksum{{Algorithm: "SHA256", Value: sha}}
	main.Comment = "the binary " + name + ", " + settings(bi)
	doc := spdxDoc{
		SPDXVersion:       "SPDX-2.3",
		DataLicense:       "CC0-1.0",
		SPDXID:            "SPDXRef-DOCUMENT",
		Name:              name + "-" + version,
		DocumentNamespace: "https://github.com/regatta-dev/regatta/spdx/" + name + "-" + version + "-" + sha,
		CreationInfo: creationInfo{
			Created:  at.Format(time.RFC3339),
			Creators: []string{"Tool: regatta-hack-sbom"},
		},
		DocumentDescribes: []string{main.SPDXID},
		Packages:          []spdxPackage{main},
	}
	std := goPackage("stdlib", bi.GoVersion, "")
	std.ExternalRefs[0].Locator = "pkg:golang/stdlib@" + bi.GoVersion
	for _, p := range append(deps(bi.Deps), std) {
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, relationship{Element: main.SPDXID, Type: "DEPENDS_ON", Related: p.SPDXID})
	}
	doc.Relationships = append([]relationship{{Element: doc.SPDXID, Type: "DESCRIBES", Related: main.SPDXID}}, doc.Relationships...)
	return doc
}

// deps are the linked modules, each as its replacement when replaced.
func deps(mods []*debug.Module) []spdxPackage {
	var out []spdxPackage
	for _, m := range mods {
		p := goPackage(m.Path, m.Version, "")
		if r := m.Replace; r != nil {
			p = goPackage(r.Path, r.Version, "")
			p.Comment = "replaces " + m.Path + " " + m.Version
		}
		out = append(out, p)
	}
	return out
}

// goPackage is a Go module with its package URL.
func goPackage(path, version, id string) spdxPackage {
	if id == "" {
		id = spdxID("Package", path+"-"+version)
	} else {
		id = "SPDXRef-" + id
	}
	loc := "NOASSERTION"
	if path != "stdlib" && !strings.HasPrefix(version, "(") && version != "" {
		loc = "https://proxy.golang.org/" + path + "/@v/" + version + ".zip"
	}
	return spdxPackage{
		Name:             path,
		SPDXID:           id,
		VersionInfo:      version,
		DownloadLocation: loc,
		ExternalRefs: []externalRef{{
			Category: "PACKAGE-MANAGER",
			Type:     "purl",
			Locator:  "pkg:golang/" + path + "@" + version,
		}},
	}
}

// settings are the build settings that say how the binary was built.
func settings(bi *buildinfo.BuildInfo) string {
	parts := []string{bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "GOOS", "GOARCH", "CGO_ENABLED", "-trimpath", "vcs.revision", "vcs.time":
			parts = append(parts, s.Key+"="+s.Value)
		}
	}
	return strings.Join(parts, " ")
}
