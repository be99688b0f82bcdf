package verbs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/internal/operr"
)

// Sentinel errors. Callers test them with errors.Is.
var (
	// ErrNoKernelSupport: the running kernel has no RDMA subsystem
	// (ibv_get_device_list fails with ENOSYS).
	ErrNoKernelSupport = errors.New("the kernel has no RDMA support (ibv_get_device_list: ENOSYS)")
	// ErrNoDevices: RDMA is available but no device exists.
	ErrNoDevices = errors.New("no RDMA devices found")
	// ErrNoProvider: the kernel has a device that no userspace provider drives.
	ErrNoProvider = errors.New("RDMA device has no userspace provider")
	// ErrClosed: the object was already closed.
	ErrClosed = errors.New("verbs: object closed")
	// ErrTimeout: a wait passed its deadline.
	ErrTimeout = errors.New("timed out")
	// ErrAborted: a hot loop was aborted through Engine.Abort.
	ErrAborted = errors.New("aborted")
	// ErrNotSupported: the device does not support the requested feature.
	ErrNotSupported = errors.New("not supported by the device")
)

// SoftRoCEHint tells a user without an RDMA device what to install and
// load; it names no file of the source tree, which an installed rdmabench
// does not have.
const SoftRoCEHint = "RDMA needs rdma-core's libraries and providers (Debian/Ubuntu: apt install rdma-core ibverbs-providers; " +
	"Fedora/RHEL: dnf install rdma-core) and a device; without RDMA hardware, make a SoftRoCE device over an Ethernet " +
	"interface: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev <if> (rdma from iproute2); where the kernel has " +
	"no rdma_rxe module, see SoftRoCE in the project's docs for a test VM"

// Error is a failed verb: Op names the C function, Err is usually a
// syscall.Errno. Detail, when set, names the arguments that mattered.
type Error = operr.Error

// newError returns nil when err is nil, like os.NewSyscallError.
func newError(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Err: err}
}

// DeviceNotFoundError: the requested device name does not exist.
type DeviceNotFoundError struct {
	Name      string
	Available []string
}

func (e *DeviceNotFoundError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("device %q not found; no RDMA devices are available", e.Name)
	}
	return fmt.Sprintf("device %q not found; available: %s", e.Name, strings.Join(e.Available, ", "))
}

// MemlockError: RLIMIT_MEMLOCK is below what a registration needs.
type MemlockError struct {
	Current uint64 // bytes; the soft limit
	Needed  uint64 // bytes; already locked plus this registration
}

func (e *MemlockError) Error() string {
	return fmt.Sprintf("RLIMIT_MEMLOCK is %s but %s must be locked for RDMA buffers: raise it "+
		"(ulimit -l unlimited, docker --ulimit memlock=-1, systemd LimitMEMLOCK=infinity, /etc/security/limits.conf)",
		fmtBytes(e.Current), fmtBytes(e.Needed))
}

func fmtBytes(n uint64) string {
	if n == ^uint64(0) {
		return "unlimited"
	}
	return fmt.Sprintf("%d bytes", n)
}

// WCStatus is enum ibv_wc_status.
type WCStatus uint32

// Work completion statuses, with C's values.
const (
	WCSuccess WCStatus = iota
	WCLocLenErr
	WCLocQPOpErr
	WCLocEECOpErr
	WCLocProtErr
	WCWRFlushErr
	WCMWBindErr
	WCBadRespErr
	WCLocAccessErr
	WCRemInvReqErr
	WCRemAccessErr
	WCRemOpErr
	WCRetryExcErr
	WCRNRRetryExcErr
	WCLocRDDViolErr
	WCRemInvRDReqErr
	WCRemAbortErr
	WCInvEECNErr
	WCInvEECStateErr
	WCFatalErr
	WCRespTimeoutErr
	WCGeneralErr
)

var wcStatusNames = [...]string{
	"IBV_WC_SUCCESS", "IBV_WC_LOC_LEN_ERR", "IBV_WC_LOC_QP_OP_ERR", "IBV_WC_LOC_EEC_OP_ERR",
	"IBV_WC_LOC_PROT_ERR", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_MW_BIND_ERR", "IBV_WC_BAD_RESP_ERR",
	"IBV_WC_LOC_ACCESS_ERR", "IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_REM_OP_ERR",
	"IBV_WC_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_LOC_RDD_VIOL_ERR",
	"IBV_WC_REM_INV_RD_REQ_ERR", "IBV_WC_REM_ABORT_ERR", "IBV_WC_INV_EECN_ERR",
	"IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR", "IBV_WC_RESP_TIMEOUT_ERR", "IBV_WC_GENERAL_ERR",
}

// wcStatusHints explain the likely cause of the statuses a benchmark meets.
var wcStatusHints = map[WCStatus]string{
	WCLocLenErr:      "local length error: receive buffer smaller than the message, or peers disagree on the size",
	WCLocQPOpErr:     "local QP operation error: work request not valid for this QP (internal bug)",
	WCLocProtErr:     "local protection error: lkey, address or length does not match a registered MR (internal bug)",
	WCWRFlushErr:     "flushed: the QP had already gone to the error state (look for the first error)",
	WCRemInvReqErr:   "remote invalid request: op not enabled in the peer's QP access flags, or the peer's receive buffer is too small",
	WCRemAccessErr:   "remote access error: wrong rkey, address out of the peer's MR, or the peer did not grant this access",
	WCRemOpErr:       "remote operation error: the responder could not complete the operation",
	WCRetryExcErr:    "transport retry counter exceeded: peer dead or unreachable, or GID/MTU mismatch",
	WCRNRRetryExcErr: "RNR retry counter exceeded: the peer had no receive posted",
}

func (s WCStatus) String() string {
	if int(s) < len(wcStatusNames) {
		return wcStatusNames[s]
	}
	return fmt.Sprintf("IBV_WC_STATUS(%d)", uint32(s))
}

// WCError is a work completion with a status other than success. Only
// Status, VendorErr, WRID and QPN are defined by the verbs spec for a failed
// completion; Opcode is what the work request was (known to the poster),
// OpUnknown when the poster kept no record of it.
type WCError struct {
	Status    WCStatus
	Opcode    Opcode // the operation of the failed work request, e.g. OpWrite
	VendorErr uint32
	WRID      uint64
	QPN       uint32
}

func (e *WCError) Error() string {
	msg := fmt.Sprintf("work completion failed: %s (op %s, vendor_err 0x%x, qpn 0x%x, wr_id %d)",
		e.Status, e.Opcode, e.VendorErr, e.QPN, e.WRID)
	if h, ok := wcStatusHints[e.Status]; ok {
		msg += ": " + h
	}
	return msg
}

// Is lets errors.Is(err, &WCError{Status: s}) match on the status alone.
func (e *WCError) Is(target error) bool {
	t, ok := target.(*WCError)
	return ok && t.Status == e.Status
}
