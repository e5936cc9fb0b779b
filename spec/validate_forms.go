package spec

import (
	"fmt"
	"io/fs"
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

// checkYtt checks a ytt add-on's paths (not templated: ytt's own data
// values parameterize it) and the reserved data value.
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
			if IsTemplated(p) {
				rep.errorf(f, "%q: ytt paths are not templated (the templates see the cluster as data.values.%s)", p, YttDataValue)
				continue
			}
			if resolved, ok := checkRepoPath(fsys, rep, f, p, pathAny); ok {
				checkLinksInside(fsys, rep, f, resolved)
			}
		}
	}
	if _, set := y.Values[YttDataValue]; set {
		rep.errorf(field+".values."+YttDataValue, "reserved: data.values.%s holds the cluster's data", YttDataValue)
	}
}
