// Command rssmap attributes the resident pages of a running Go program's
// executable mapping to ELF sections and to Go packages, so that the
// cost in RSS of linking a package can be measured (issue 30):
//
//	go run ./hack/rssmap -pid 1234 [-top 40]
//
// It reads /proc/<pid>/pagemap (root), the binary's section headers and
// its symbol table (a binary built without -s). A resident page's bytes
// are shared out among the symbols it holds, in proportion to their size
// in it; bytes no symbol covers count for the section.
package main

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

const pageSize = 4096

func main() {
	pid := flag.Int("pid", 0, "process to read")
	top := flag.Int("top", 40, "packages to list")
	flag.Parse()
	if err := run(*pid, *top); err != nil {
		fmt.Fprintln(os.Stderr, "rssmap:", err)
		os.Exit(1)
	}
}

// page is one resident page: present, and whether it is still the file's
// page (bit 61) rather than a private copy (anonymous).
type page struct{ file bool }

func run(pid, top int) error {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return err
	}
	f, err := elf.Open(exe)
	if err != nil {
		return err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("%s: %w (build without -s)", exe, err)
	}
	pages, err := residentPages(pid, f)
	if err != nil {
		return err
	}
	sections(f, pages)
	packages(f, syms, pages, top)
	return nil
}

// residentPages reads the pagemap entries of every allocated section.
func residentPages(pid int, f *elf.File) (map[uint64]page, error) {
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	out := map[uint64]page{}
	buf := make([]byte, 8)
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Addr == 0 {
			continue
		}
		for a := s.Addr &^ (pageSize - 1); a < s.Addr+s.Size; a += pageSize {
			if _, err := pm.ReadAt(buf, int64(a/pageSize*8)); err != nil {
				return nil, err
			}
			e := binary.LittleEndian.Uint64(buf)
			if e&(1<<63) != 0 {
				out[a] = page{file: e&(1<<61) != 0}
			}
		}
	}
	return out, nil
}

// sections prints resident KiB per allocated section, file and anonymous.
func sections(f *elf.File, pages map[uint64]page) {
	fmt.Printf("%-20s %10s %10s %10s\n", "section", "size KiB", "file KiB", "anon KiB")
	var tf, ta uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Addr == 0 {
			continue
		}
		var fb, ab uint64
		for a := s.Addr &^ (pageSize - 1); a < s.Addr+s.Size; a += pageSize {
			p, ok := pages[a]
			switch {
			case !ok:
			case p.file:
				fb += pageSize
			default:
				ab += pageSize
			}
		}
		tf, ta = tf+fb, ta+ab
		fmt.Printf("%-20s %10d %10d %10d\n", s.Name, s.Size>>10, fb>>10, ab>>10)
	}
	fmt.Printf("%-20s %10s %10d %10d\n\n", "total", "", tf>>10, ta>>10)
}

// packages shares each resident page among the symbols in it and prints
// the packages holding the most.
func packages(f *elf.File, syms []elf.Symbol, pages map[uint64]page, top int) {
	slices.SortFunc(syms, func(a, b elf.Symbol) int { return cmp.Compare(a.Value, b.Value) })
	byPkg := map[string]float64{}
	for _, s := range syms {
		if s.Size == 0 || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section].Name
		for a := s.Value &^ (pageSize - 1); a < s.Value+s.Size; a += pageSize {
			if _, ok := pages[a]; !ok {
				continue
			}
			lo, hi := max(a, s.Value), min(a+pageSize, s.Value+s.Size)
			byPkg[sec+" "+pkgOf(s.Name)] += float64(hi - lo)
		}
	}
	type row struct {
		name string
		kib  float64
	}
	var rows []row
	for k, v := range byPkg {
		rows = append(rows, row{k, v / 1024})
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.kib, a.kib) })
	fmt.Printf("%-70s %10s\n", "section package (symbol bytes on resident pages)", "KiB")
	for i, r := range rows {
		if i >= top {
			break
		}
		fmt.Printf("%-70s %10.0f\n", r.name, r.kib)
	}
}

// pkgOf is the package a Go symbol belongs to: "a/b/c.F" -> "a/b/c";
// type descriptors count for the package of their type.
func pkgOf(name string) string {
	name = strings.TrimPrefix(name, "type:")
	name = strings.TrimLeft(name, "*[]")
	if strings.HasPrefix(name, "go:") || strings.HasPrefix(name, "runtime.") {
		if i := strings.IndexAny(name, ".("); i > 0 && strings.HasPrefix(name, "runtime.") {
			return "runtime"
		}
		return name
	}
	slash := strings.LastIndex(name, "/")
	if dot := strings.Index(name[slash+1:], "."); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}
