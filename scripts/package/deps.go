package main

import (
	"debug/elf"
	"fmt"
	"strconv"
	"strings"
)

// deps are the packages the binary needs, per format, with the lowest
// versions that provide every versioned symbol it imports.
type deps struct {
	deb, rpm []string
}

// rdmaCoreSince maps a symbol version node of libibverbs / librdmacm to the
// first release that has it (Debian's libibverbs1.symbols and
// librdmacm1.symbols; the rdma-core release number, or the old
// libibverbs/librdmacm package version for the oldest nodes).
var rdmaCoreSince = map[string]string{
	"IBVERBS_1.0": "1.1.6", "IBVERBS_1.1": "1.1.6", "IBVERBS_1.5": "20", "IBVERBS_1.6": "24",
	"IBVERBS_1.7": "25", "IBVERBS_1.8": "28", "IBVERBS_1.9": "30", "IBVERBS_1.10": "31",
	"IBVERBS_1.11": "32", "IBVERBS_1.12": "34", "IBVERBS_1.13": "35", "IBVERBS_1.14": "36",
	"RDMACM_1.0": "1.0.15", "RDMACM_1.1": "16", "RDMACM_1.2": "23", "RDMACM_1.3": "31",
}

// libraryDeps reads the binary's imported symbol versions and returns
// its dependencies: glibc, libibverbs and librdmacm at the versions that
// have every node it uses. A node missing from rdmaCoreSince (a newer
// rdma-core) is an error, so that the table is updated rather than a too
// low version declared.
func libraryDeps(bin string) (deps, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return deps{}, fmt.Errorf("reading %s: %w", bin, err)
	}
	defer f.Close()
	syms, err := f.ImportedSymbols()
	if err != nil {
		return deps{}, fmt.Errorf("%s: imported symbols: %w (a static or non-cgo build?)", bin, err)
	}
	glibc, verbs, cm := "", "", ""
	for _, s := range syms {
		v := s.Version
		switch {
		case strings.HasPrefix(v, "GLIBC_2."):
			glibc = maxVersion(glibc, strings.TrimPrefix(v, "GLIBC_"))
		case strings.HasPrefix(v, "IBVERBS_"), strings.HasPrefix(v, "RDMACM_"):
			since, ok := rdmaCoreSince[v]
			if !ok {
				return deps{}, fmt.Errorf("%s imports %s@%s, newer than the table in scripts/package/deps.go: "+
					"add its first rdma-core release (from libibverbs1.symbols / librdmacm1.symbols)", bin, s.Name, v)
			}
			if strings.HasPrefix(v, "IBVERBS_") {
				verbs = maxVersion(verbs, since)
			} else {
				cm = maxVersion(cm, since)
			}
		}
	}
	if verbs == "" || cm == "" {
		return deps{}, fmt.Errorf("%s does not link libibverbs and librdmacm (not an rdmabench built with cgo?)", bin)
	}
	var d deps
	d.deb = []string{atLeast("libc6", glibc), atLeast("libibverbs1", verbs), atLeast("librdmacm1", cm)}
	d.rpm = []string{atLeast("glibc", glibc), atLeast("libibverbs", rpmOnly(verbs)), atLeast("librdmacm", rpmOnly(cm))}
	return d, nil
}

// rpmOnly drops the pre-rdma-core package versions (1.1.6, 1.0.15): rpm
// distributions ship libibverbs and librdmacm versioned by rdma-core.
func rpmOnly(v string) string {
	if strings.Contains(v, ".") && !strings.HasSuffix(v, ".0") {
		return ""
	}
	return v
}

func atLeast(pkg, v string) string {
	if v == "" {
		return pkg
	}
	return pkg + " (>= " + v + ")"
}

// maxVersion compares dotted numeric versions ("2.34" < "2.4" is false).
func maxVersion(a, b string) string {
	if a == "" {
		return b
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x > y {
				return a
			}
			return b
		}
	}
	return a
}
