package vm

import (
	"debug/elf"
	"fmt"
	"strings"
)

// LinksRDMA reports whether an executable links libibverbs or librdmacm (its
// ELF DT_NEEDED entries): such a test binary needs the guest.
func LinksRDMA(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, fmt.Errorf("%w: %s: %v", ErrUsage, path, err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return false, nil // static: links nothing
	}
	for _, l := range libs {
		if strings.HasPrefix(l, "libibverbs.") || strings.HasPrefix(l, "librdmacm.") {
			return true, nil
		}
	}
	return false, nil
}
