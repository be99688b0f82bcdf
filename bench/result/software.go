package result

import "strings"

// SoftwareRDMANote is the banner for a software RDMA device (rxe or siw),
// named by its device name or kernel driver. It says which case applies:
// both ends on one device (rxe's and siw's same-device loopback never
// touches a netdev), or the device over a named netdev (the kernel's RDMA
// stack over that NIC); netdev "" and !sameDevice leave the case unsaid.
func SoftwareRDMANote(device, driver, netdev string, sameDevice bool) string {
	kind := SoftwareKind(device, driver)
	switch {
	case sameDevice:
		return "software RDMA (" + kind + ", both ends on " + device + "): " + SoftwareCaveat + "; same-device loopback bypasses the netdev"
	case netdev != "":
		return "software RDMA (" + kind + " over " + netdev + "): " + SoftwareCaveat + "; the kernel's RDMA stack over that netdev"
	}
	return "software RDMA (" + kind + "): " + SoftwareCaveat
}

// SoftwareCaveat is why software RDMA figures are not hardware figures.
const SoftwareCaveat = "not representative of hardware"

// SoftwareKind names the software RDMA provider: "siw" or "rxe".
func SoftwareKind(device, driver string) string {
	if strings.HasPrefix(device, "siw") || driver == "siw" {
		return "siw"
	}
	return "rxe"
}
