package result

import "strings"

// SoftwareRDMANote is the banner for a software RDMA device (rxe or siw),
// named by its device name or kernel driver.
func SoftwareRDMANote(device, driver string) string {
	return "software RDMA (" + SoftwareKind(device, driver) + "): " + SoftwareCaveat
}

// SoftwareCaveat is why software RDMA figures are not hardware figures.
const SoftwareCaveat = "not representative of hardware; same-device loopback bypasses the netdev"

// SoftwareKind names the software RDMA provider: "siw" or "rxe".
func SoftwareKind(device, driver string) string {
	if strings.HasPrefix(device, "siw") || driver == "siw" {
		return "siw"
	}
	return "rxe"
}
