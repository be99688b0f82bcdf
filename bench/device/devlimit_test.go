package device

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestIsDeviceLimit: a QP the device cannot size (mlx5's WQE blocks: EINVAL
// or ENOMEM within max_qp_wr) is a device limit on either side; other
// failures of the same verbs, and the same errnos elsewhere, are not.
func TestIsDeviceLimit(t *testing.T) {
	qp := func(errno syscall.Errno) error {
		return fmt.Errorf("send bw 64B: create QP: %w", &verbs.Error{Op: "ibv_create_qp", Detail: "RC, send_wr 8192", Err: errno})
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"create_qp EINVAL (mlx5sq)", qp(syscall.EINVAL), true},
		{"create_qp ENOMEM", qp(syscall.ENOMEM), true},
		{"rdma_create_qp EINVAL", &verbs.Error{Op: "rdma_create_qp", Err: syscall.EINVAL}, true},
		{"create_cq ENOMEM", &verbs.Error{Op: "ibv_create_cq", Err: syscall.ENOMEM}, true},
		{"max_qp_wr checked first", fmt.Errorf("tx depth 65536 is above max_qp_wr 32768: %w", verbs.ErrNotSupported), true},
		{"the server's device", &proto.RemoteError{Msg: "ibv_create_qp: invalid argument", Code: CodeLimit}, true},
		{"create_qp EIO", qp(syscall.EIO), false},
		{"reg_mr ENOMEM", &verbs.Error{Op: "ibv_reg_mr", Err: syscall.ENOMEM}, false},
		{"modify_qp EINVAL", &verbs.Error{Op: "ibv_modify_qp", Err: syscall.EINVAL}, false},
		{"another remote error", &proto.RemoteError{Msg: "boom"}, false},
		{"budget", &proto.RemoteError{Msg: "refused", Code: "budget"}, false}, // bench/endpoint's CodeBudget
		{"plain", errors.New("x"), false},
	} {
		if got := IsLimit(c.err); got != c.want {
			t.Errorf("%s: IsLimit(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
	// the server sends a device limit with its code, and other errors as they are
	var re *proto.RemoteError
	if err := RemoteError(qp(syscall.EINVAL)); !errors.As(err, &re) || re.Code != CodeLimit || re.Msg != qp(syscall.EINVAL).Error() {
		t.Errorf("RemoteError(create_qp EINVAL) = %#v, want a RemoteError with code %q and the message", err, CodeLimit)
	}
	if err := RemoteError(qp(syscall.EIO)); errors.As(err, &re) {
		t.Errorf("RemoteError(create_qp EIO) = %#v, want the error as it is", err)
	}
}
