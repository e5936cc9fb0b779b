package bench

import (
	"strconv"
	"strings"
)

// ParseGoBench reads `go test -bench -benchmem` output and returns the
// median of each benchmark over its runs, in order of appearance.
func ParseGoBench(out string) []GoBench {
	type acc struct {
		b              GoBench
		ns, by, allocs []float64
	}
	var order []string
	runs := map[string]*acc{}
	pkg := ""
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "pkg:" {
			pkg = f[1]
			continue
		}
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		key := pkg + " " + f[0]
		a := runs[key]
		if a == nil {
			a = &acc{b: GoBench{Package: pkg, Name: f[0]}}
			runs[key] = a
			order = append(order, key)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				a.ns = append(a.ns, v)
			case "B/op":
				a.by = append(a.by, v)
			case "allocs/op":
				a.allocs = append(a.allocs, v)
			}
		}
	}
	out2 := make([]GoBench, 0, len(order))
	for _, k := range order {
		a := runs[k]
		a.b.NsPerOp, a.b.BytesPerOp, a.b.AllocsPerOp = Quantile(a.ns, .5), Quantile(a.by, .5), Quantile(a.allocs, .5)
		a.b.Runs = len(a.ns)
		out2 = append(out2, a.b)
	}
	return out2
}
