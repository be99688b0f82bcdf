package device

import (
	"errors"
	"syscall"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/verbs"
)

// CodeLimit is the RemoteError code of a server whose device refused
// what a test asked of it (IsLimit): the client exits 3, as it does
// when its own device refuses, not 4.
const CodeLimit = "device-limit"

// sizedCreates are the verbs whose ENOMEM or EINVAL means the device cannot
// hold the sizes asked (a queue's depth, inline data, SGEs): mlx5, for one,
// counts a send queue in 64-byte WQE blocks, so a tx depth within
// max_qp_wr may still not fit (verbs.createQPDetail says so).
var sizedCreates = map[string]bool{"ibv_create_qp": true, "rdma_create_qp": true, "ibv_create_cq": true, "ibv_create_srq": true}

// IsLimit reports whether err is a device refusing a test's sizes or
// features, on this side or the server's: verbs.ErrNotSupported (a limit
// checked before any call), a QP, CQ or SRQ the device could not create
// with ENOMEM or EINVAL, or a RemoteError with CodeLimit.
func IsLimit(err error) bool {
	var ve *verbs.Error
	var re *proto.RemoteError
	switch {
	case errors.Is(err, verbs.ErrNotSupported):
		return true
	case errors.As(err, &ve) && sizedCreates[ve.Op]:
		return errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.EINVAL)
	case errors.As(err, &re):
		return re.Code == CodeLimit
	}
	return false
}

// RemoteError is err as the server sends it: with CodeLimit when
// its device refused (IsLimit), else as it is.
func RemoteError(err error) error {
	var re *proto.RemoteError
	if IsLimit(err) && !errors.As(err, &re) {
		return &proto.RemoteError{Msg: err.Error(), Code: CodeLimit}
	}
	return err
}
