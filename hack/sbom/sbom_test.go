package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestDocument checks the document of a binary with a replaced module.
func TestDocument(t *testing.T) {
	bi := &buildinfo.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/regatta-dev/regatta", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/spf13/cobra", Version: "v1.10.2"},
			{Path: "k8s.io/api", Version: "v0.37.0", Replace: &debug.Module{Path: "k8s.io/api", Version: "v0.37.2"}},
		},
		Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"}, {Key: "CGO_ENABLED", Value: "0"}},
	}
	doc := document(bi, "regatta-linux-arm64", "v1.2.3", "ab12", time.Unix(0, 0))
	if doc.Name != "regatta-linux-arm64-v1.2.3" || doc.CreationInfo.Created != "1970-01-01T00:00:00Z" {
		t.Errorf("name %q created %q", doc.Name, doc.CreationInfo.Created)
	}
	purls := map[string]bool{}
	id := regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)
	for _, p := range doc.Packages {
		purls[p.ExternalRefs[0].Locator] = true
		if !id.MatchString(p.SPDXID) {
			t.Errorf("SPDXID %q is not valid", p.SPDXID)
		}
	}
	for _, want := range []string{
		"pkg:golang/github.com/regatta-dev/regatta@v1.2.3",
		"pkg:golang/github.com/spf13/cobra@v1.10.2",
		"pkg:golang/k8s.io/api@v0.37.2",
		"pkg:golang/stdlib@go1.26.8",
	} {
		if !purls[want] {
			t.Errorf("no package %s in %v", want, purls)
		}
	}
	if len(doc.Relationships) != 4 || doc.Relationships[0].Type != "DESCRIBES" {
		t.Errorf("relationships %+v", doc.Relationships)
	}
	if !strings.Contains(doc.Packages[0].Comment, "GOARCH=arm64 CGO_ENABLED=0") {
		t.Errorf("main package comment %q lacks the build settings", doc.Packages[0].Comment)
	}
}

// TestRunReadsABinary writes the document of this test binary, whose
// module information the Go toolchain embedded, and parses it back.
func TestRunReadsABinary(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767323045")
	var out bytes.Buffer
	if err := run(&out, os.Args[0], "v9.9.9"); err != nil {
		t.Fatal(err)
	}
	var doc spdxDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	main := doc.Packages[0]
	if main.Name != "github.com/regatta-dev/regatta" || main.VersionInfo != "v9.9.9" || len(main.Checksums[0].Value) != 64 {
		t.Errorf("main package %+v", main)
	}
	if doc.CreationInfo.Created != "2026-01-02T03:04:05Z" {
		t.Errorf("created %s, want $SOURCE_DATE_EPOCH", doc.CreationInfo.Created)
	}
}
