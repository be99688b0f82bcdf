package doctor

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The PCIe path: the link's trained speed and width, relaxed ordering in
// the device's DevCtl, and ACS redirection on the bridges above it.

// noPCI is the answer of a PCI check for a device without a PCI function.
func (h *host) noPCI() (string, string, string) {
	if h.devDir == "" {
		return unknown, noDevice, "rdmabench devices lists the devices"
	}
	return unknown, h.in.Device + " has no PCI device in sysfs (software RDMA, or a VM without the NIC passed through)",
		"run doctor on the host that owns the NIC"
}

// checkPCIeLink: a link trained below its capability (a x16 card in a x8
// slot, a Gen4 card at Gen3) caps bandwidth below the NIC's.
func checkPCIeLink(h *host) (string, string, string) {
	if h.pciDir == "" {
		return h.noPCI()
	}
	cs, ok1 := read(filepath.Join(h.pciDir, "current_link_speed"))
	ms, ok2 := read(filepath.Join(h.pciDir, "max_link_speed"))
	cw, ok3 := readInt(filepath.Join(h.pciDir, "current_link_width"))
	mw, ok4 := readInt(filepath.Join(h.pciDir, "max_link_width"))
	cur, ok5 := parseGTs(cs)
	mx, ok6 := parseGTs(ms)
	bdf := filepath.Base(h.pciDir)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return unknown, fmt.Sprintf("%s (%s): link speed or width not readable (%q x%d of %q x%d)", h.in.Device, bdf, cs, cw, ms, mw),
			"lspci -vv -s " + bdf + " | grep LnkSta"
	}
	detail := fmt.Sprintf("%s (%s): %s x%d, capable of %s x%d", h.in.Device, bdf, cs, cw, ms, mw)
	fix := "reseat the card in a slot wired for its full width and generation; check the BIOS's slot settings (lspci -vv -s " + bdf + ")"
	switch {
	case cw < mw:
		return fail, detail + ": trained at fewer lanes", fix
	case cur < mx:
		return warn, detail + ": trained at a lower speed (some devices train down when idle: check again under load)", fix
	}
	return pass, detail, ""
}

// parseGTs reads "16.0 GT/s PCIe" or "8 GT/s" as GT/s.
func parseGTs(s string) (float64, bool) {
	f := strings.Fields(s)
	if len(f) < 2 || !strings.HasPrefix(f[1], "GT/s") {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil && v > 0
}

// PCI configuration space offsets and bits.
const (
	cfgStatus      = 0x06
	cfgStatusCaps  = 0x10 // Status: a capability list exists
	cfgCapPtr      = 0x34
	capIDPCIe      = 0x10
	pcieDevCtl     = 0x08 // DevCtl, from the PCIe capability
	devCtlRelaxed  = 0x10 // Enable Relaxed Ordering
	extCapStart    = 0x100
	extCapIDACS    = 0x000d
	acsCtl         = 0x06 // ACS Control, from the ACS capability
	acsRedirectReq = 0x04 // P2P Request Redirect
	acsRedirectCmp = 0x08 // P2P Completion Redirect
	acsEgressCtl   = 0x20 // P2P Egress Control
)

// readConfig reads a PCI function's config space (a user without
// CAP_SYS_ADMIN sees only its first 64 bytes).
func readConfig(dir string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, "config")) }

// findCap returns the offset of standard capability id; ok is false when
// the list runs past what could be read (known is then false).
func findCap(cfg []byte, id byte) (off int, found, known bool) {
	if len(cfg) < 0x40 {
		return 0, false, false
	}
	if binary.LittleEndian.Uint16(cfg[cfgStatus:])&cfgStatusCaps == 0 {
		return 0, false, true
	}
	p := int(cfg[cfgCapPtr] &^ 3)
	for n := 0; p != 0 && n < 48; n++ {
		if p+2 > len(cfg) {
			return 0, false, false
		}
		if cfg[p] == id {
			return p, true, true
		}
		p = int(cfg[p+1] &^ 3)
	}
	return 0, false, true
}

// findExtCap returns the offset of extended capability id.
func findExtCap(cfg []byte, id uint16) (off int, found, known bool) {
	if len(cfg) < extCapStart+4 {
		return 0, false, false
	}
	p := extCapStart
	for n := 0; p >= extCapStart && n < 512; n++ {
		if p+4 > len(cfg) {
			return 0, false, false
		}
		hdr := binary.LittleEndian.Uint32(cfg[p:])
		if hdr == 0 || hdr == 0xffffffff {
			return 0, false, true
		}
		if uint16(hdr) == id {
			return p, true, true
		}
		p = int(hdr>>20) &^ 3
	}
	return 0, false, true
}

// rootNeeded is the fix of a config space that could not be read whole.
const rootNeeded = "run doctor as root (the PCI config space beyond 64 bytes needs CAP_SYS_ADMIN), or lspci -vvv as root"

// checkRelaxedOrdering: with relaxed ordering off in DevCtl, the NIC's
// writes to memory stay strictly ordered, which costs large WRITE and READ
// bandwidth on hosts that need it (AMD EPYC, Grace); perftest asks for
// IBV_ACCESS_RELAXED_ORDERING by default.
func checkRelaxedOrdering(h *host) (string, string, string) {
	if h.pciDir == "" {
		return h.noPCI()
	}
	bdf := filepath.Base(h.pciDir)
	cfg, err := readConfig(h.pciDir)
	if err != nil {
		return unknown, fmt.Sprintf("%s config space: %v", bdf, err), rootNeeded
	}
	off, found, known := findCap(cfg, capIDPCIe)
	switch {
	case !known || (found && off+pcieDevCtl+2 > len(cfg)):
		return unknown, fmt.Sprintf("%s: the PCIe capability lies beyond the %d bytes of config space readable", bdf, len(cfg)), rootNeeded
	case !found:
		return unknown, bdf + " has no PCI Express capability", "lspci -vvv -s " + bdf
	}
	ctl := binary.LittleEndian.Uint16(cfg[off+pcieDevCtl:])
	if ctl&devCtlRelaxed == 0 {
		return warn, fmt.Sprintf("%s (%s): relaxed ordering disabled in DevCtl (0x%04x)", h.in.Device, bdf, ctl),
			fmt.Sprintf("enable it (setpci -s %s CAP_EXP+8.w=0010:0010, or the NIC's firmware setting), and compare runs with the same --disable_pcie_relaxed", bdf)
	}
	return pass, fmt.Sprintf("%s (%s): relaxed ordering enabled in DevCtl (0x%04x)", h.in.Device, bdf, ctl), ""
}

// checkACS: ACS request or completion redirection on a bridge above the
// NIC sends peer-to-peer traffic (GPUDirect RDMA to a GPU under the same
// switch) up to the root complex, which costs bandwidth and latency.
func checkACS(h *host) (string, string, string) {
	if h.pciDir == "" {
		return h.noPCI()
	}
	var redirect, unread, seen []string
	for dir := filepath.Dir(h.pciDir); isPCI(filepath.Base(dir)); dir = filepath.Dir(dir) {
		bdf := filepath.Base(dir)
		seen = append(seen, bdf)
		cfg, err := readConfig(dir)
		if err != nil {
			unread = append(unread, bdf)
			continue
		}
		off, found, known := findExtCap(cfg, extCapIDACS)
		switch {
		case !known || (found && off+acsCtl+2 > len(cfg)):
			unread = append(unread, bdf)
		case found:
			if ctl := binary.LittleEndian.Uint16(cfg[off+acsCtl:]); ctl&(acsRedirectReq|acsRedirectCmp|acsEgressCtl) != 0 {
				redirect = append(redirect, fmt.Sprintf("%s (ACSCtl 0x%04x)", bdf, ctl))
			}
		}
	}
	switch {
	case len(seen) == 0:
		return pass, filepath.Base(h.pciDir) + " sits on a root bus: no bridge above it to redirect", ""
	case len(redirect) > 0:
		return warn, "ACS redirects peer-to-peer traffic on the path at " + strings.Join(redirect, ", "),
			"for GPUDirect RDMA under one switch, clear ACS redirection on those bridges (setpci ECAP_ACS+6.w=0000, or the BIOS's ACS setting); it does not matter to host memory"
	case len(unread) > 0:
		return unknown, "ACS of the bridges above " + filepath.Base(h.pciDir) + " not readable: " + strings.Join(unread, ", "), rootNeeded
	}
	return pass, "no ACS redirection on the bridges above " + filepath.Base(h.pciDir) + ": " + strings.Join(seen, ", "), ""
}
