// Command image builds regatta's container image as an OCI image layout
// and an OCI archive, without a container daemon:
//
//	go run ./hack/image -platform linux/amd64=bin/regatta-linux-amd64 \
//	    -platform linux/arm64=bin/regatta-linux-arm64 \
//	    -version v1.2.3 -revision <commit> -created <unix time> \
//	    -out bin/image/oci -archive bin/image/regatta-oci.tar
//
// Each platform's image has two layers: the files every platform shares
// (/etc/passwd and /etc/group with the user regatta, 65532; its home;
// /tmp; the CA certificates) and the static binary at
// /usr/local/bin/regatta. There is no shell. Every time in the image is
// -created (the commit's date) and every tar is sorted, so one commit
// built with one Go toolchain and one ca-certificates package gives one
// digest. The Dockerfile beside this file builds the same files.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// uid is the image's user and group.
const uid = 65532

// options say what to build.
type options struct {
	Platforms []platformBinary
	// Passwd, Group and CACerts are the files the image carries.
	Passwd, Group, CACerts string
	// CASource says where CACerts comes from (a label).
	CASource                  string
	Version, Revision, Source string
	Created                   time.Time
	// Out is the layout folder; Archive, when set, the archive file.
	Out, Archive string
}

type platformBinary struct {
	OS, Arch, Binary string
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err == nil {
		var digest string
		if digest, err = build(o); err == nil {
			fmt.Println(digest)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "image:", err)
	os.Exit(1)
}

func parseFlags(args []string) (options, error) {
	o := options{}
	fl := flag.NewFlagSet("image", flag.ContinueOnError)
	fl.Func("platform", "os/arch=binary (repeatable)", func(s string) error {
		p, bin, ok := strings.Cut(s, "=")
		goos, arch, ok2 := strings.Cut(p, "/")
		if !ok || !ok2 {
			return fmt.Errorf("%q: want os/arch=binary", s)
		}
		o.Platforms = append(o.Platforms, platformBinary{OS: goos, Arch: arch, Binary: bin})
		return nil
	})
	fl.StringVar(&o.Passwd, "passwd", "hack/image/rootfs/etc/passwd", "the image's /etc/passwd")
	fl.StringVar(&o.Group, "group", "hack/image/rootfs/etc/group", "the image's /etc/group")
	fl.StringVar(&o.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle (Debian's ca-certificates)")
	fl.StringVar(&o.Version, "version", "dev", "org.opencontainers.image.version and the layout's tag")
	fl.StringVar(&o.Revision, "revision", "unknown", "org.opencontainers.image.revision (the Git commit)")
	fl.StringVar(&o.Source, "source", "https://github.com/regatta-dev/regatta", "org.opencontainers.image.source")
	created := fl.Int64("created", 0, "creation time, Unix seconds (default $SOURCE_DATE_EPOCH, else 0)")
	fl.StringVar(&o.Out, "out", "bin/image/oci", "OCI layout folder to write")
	fl.StringVar(&o.Archive, "archive", "", "OCI archive (tar of the layout) to write")
	if err := fl.Parse(args); err != nil {
		return o, err
	}
	if len(o.Platforms) == 0 {
		return o, errors.New("no -platform")
	}
	if *created == 0 {
		if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" {
			v, err := strconv.ParseInt(e, 10, 64)
			if err != nil {
				return o, fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", e, err)
			}
			*created = v
		}
	}
	o.Created = time.Unix(*created, 0).UTC()
	o.CASource = caSource(o.CACerts)
	return o, nil
}

// caSource names the distribution package the CA bundle comes from, with
// its version, when dpkg knows it: "debian ca-certificates 20230311+deb12u1".
func caSource(file string) string {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "ca-certificates").Output()
	if err != nil || file != "/etc/ssl/certs/ca-certificates.crt" {
		return file
	}
	distro := "debian"
	if rel, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(rel), "\n") {
			if v, ok := strings.CutPrefix(l, "ID="); ok {
				distro = strings.Trim(v, `"`)
			}
		}
	}
	return distro + " ca-certificates " + strings.TrimSpace(string(out))
}
