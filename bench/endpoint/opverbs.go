package endpoint

import (
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// The verbs half of the op table (bench/spec/ops.go): for each op the
// work request its engine posts and the ODP capabilities its memory needs
// on RC (verbs.Context.CheckODP). TestOpVerbs holds it to spec.Ops.
var OpVerbs = map[string]struct {
	Code verbs.Opcode
	ODP  verbs.ODPOps
}{
	result.OpSend:     {verbs.OpSend, verbs.ODPSend | verbs.ODPRecv},
	result.OpWrite:    {verbs.OpWrite, verbs.ODPWrite},
	result.OpRead:     {verbs.OpRead, verbs.ODPRead},
	result.OpFetchAdd: {verbs.OpFetchAdd, verbs.ODPAtomic},
	result.OpCmpSwap:  {verbs.OpCmpSwap, verbs.ODPAtomic},
	// with immediate: each message also consumes a posted receive
	result.OpWriteImm: {verbs.OpWriteWithImm, verbs.ODPWrite | verbs.ODPRecv},
	result.OpSendImm:  {verbs.OpSendWithImm, verbs.ODPSend | verbs.ODPRecv},
}

// accessVerbs maps an op's remote access (OpTraits.Access) to verbs'.
var accessVerbs = map[spec.Access]verbs.Access{
	spec.AccessNone:         0,
	spec.AccessRemoteWrite:  verbs.AccessRemoteWrite,
	spec.AccessRemoteRead:   verbs.AccessRemoteRead,
	spec.AccessRemoteAtomic: verbs.AccessRemoteAtomic,
}
