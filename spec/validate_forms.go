package spec

import (
	"encoding/pem"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
	"maps"
	"slices"
)

// JsonnetDataVar is the external variable that holds the cluster's data
// in a Jsonnet add-on; a profile cannot set it.
const JsonnetDataVar = "regatta"

// checkJsonnet checks a Jsonnet add-on: its main file, its library
// folders and the names of its variables and arguments.
func checkJsonnet(fsys fs.FS, rep report, field string, j *JsonnetSource) {
	checkRepoPath(fsys, rep, field+".path", j.Path, pathFile)
	for i, d := range j.JPath {
		f := fmt.Sprintf("%s.jpath[%d]", field, i)
		if IsTemplated(d) {
			rep.errorf(f, "%q: library folders are not templated", d)
			continue
		}
		resolved, ok := checkRepoPath(fsys, rep, f, d, pathAny)
		if info, err := fs.Stat(fsys, resolved); ok && err == nil && !info.IsDir() {
			rep.errorf(f, "%s is a file, not a library folder", d)
		}
	}
	checkJsonnetNames(rep, field, "extVars", "extCode", j.ExtVars, j.ExtCode)
	checkJsonnetNames(rep, field, "tlas", "tlaCode", j.TLAs, j.TLACode)
}

// checkJsonnetNames refuses empty names, a name set both as a string and
// as code, and the reserved data variable.
func checkJsonnetNames(rep report, field, strName, codeName string, str, code map[string]string) {
	for _, set := range []struct {
		name string
		m    map[string]string
	}{{strName, str}, {codeName, code}} {
		for _, k := range sortedNames(set.m) {
			switch {
			case k == "":
				rep.errorf(field+"."+set.name, "a name is empty")
			case k == JsonnetDataVar && strName == "extVars":
				rep.errorf(field+"."+set.name+"."+k, "reserved: std.extVar('%s') holds the cluster's data", JsonnetDataVar)
			case set.name == codeName && hasName(str, k):
				rep.errorf(field+"."+codeName+"."+k, "also set in %s; set it once", strName)
			}
		}
	}
}

func hasName(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

func sortedNames(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// YttDataValue is the data value that holds the cluster's data in a ytt
// add-on; a profile cannot set it.
const YttDataValue = "regatta"

// checkYtt checks a ytt add-on's paths (a templated one when rendering,
// like other add-on paths) and the reserved data value.
func checkYtt(fsys fs.FS, rep report, field string, y *YttSource) {
	if len(y.Paths) == 0 {
		rep.errorf(field+".paths", "required: the files and folders ytt renders")
	}
	for _, set := range []struct {
		name string
		list []string
	}{{"paths", y.Paths}, {"valuesFiles", y.ValuesFiles}} {
		for i, p := range set.list {
			f := fmt.Sprintf("%s.%s[%d]", field, set.name, i)
			if resolved, ok := checkRepoPath(fsys, rep, f, p, pathAny); ok {
				checkLinksInside(fsys, rep, f, resolved)
			}
		}
	}
	if _, set := y.Values[YttDataValue]; set {
		rep.errorf(field+".values."+YttDataValue, "reserved: data.values.%s holds the cluster's data", YttDataValue)
	}
}

// digestForm is an OCI digest.
var digestForm = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// checkOCI checks an add-on's OCI source: its URL, exactly one selector
// and a form that reads files (not a Helm chart, which has oci:// itself).
func checkOCI(rep report, field string, a Addon) {
	o := a.OCI
	if !strings.HasPrefix(o.URL, "oci://") || len(o.URL) == len("oci://") {
		rep.errorf(field+".url", "%q must be oci://registry/repository", o.URL)
	}
	n := 0
	for _, v := range []string{o.Tag, o.Semver, o.Digest} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		rep.errorf(field, "set exactly one of tag, semver or digest")
	}
	if o.Semver != "" {
		if _, err := semver.NewConstraint(o.Semver); err != nil {
			rep.errorf(field+".semver", "%q: %v", o.Semver, err)
		}
	}
	checkDuration(rep, field+".interval", o.Interval)
	if o.Digest != "" && !digestForm.MatchString(o.Digest) {
		rep.errorf(field+".digest", "%q is not a sha256:<64 hex digits> digest", o.Digest)
	}
	if a.Helm != nil {
		rep.errorf(field, "a Helm add-on takes oci:// in helm.repositoryURL")
	}
	if r := o.SecretRef; r != nil && r.Name == "" {
		rep.errorf(field+".secretRef.name", "required")
	}
	if v := o.Verify; v != nil {
		checkOCIVerify(rep, field+".verify", v)
	}
}

// checkOCIVerify checks that a verify names one public key.
func checkOCIVerify(rep report, field string, v *OCIVerify) {
	switch {
	case (v.PublicKey == "") == (v.PublicKeySecretRef == nil):
		rep.errorf(field, "set exactly one of publicKey or publicKeySecretRef")
	case v.PublicKey != "":
		if b, _ := pem.Decode([]byte(v.PublicKey)); b == nil || b.Type != "PUBLIC KEY" {
			rep.errorf(field+".publicKey", "not a PEM PUBLIC KEY block (cosign.pub)")
		}
	case v.PublicKeySecretRef.Name == "":
		rep.errorf(field+".publicKeySecretRef.name", "required")
	}
}
