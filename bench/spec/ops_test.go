package spec

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// TestOpTable: the op table has one row per op of the JSON vocabulary, in
// its order, and every row is whole.
func TestOpTable(t *testing.T) {
	var names []string
	for _, r := range Ops() {
		names = append(names, r.Name)
		switch {
		case r.Interval == "" || r.PerOpInterval == nil:
			t.Errorf("%s: no timed interval", r.Name)
		case len(r.QPTypes) == 0 || !r.Carries(result.QPTypeRC):
			t.Errorf("%s: QP types %v (every op runs on RC)", r.Name, r.QPTypes)
		case r.Atomic && (!r.ReadAtomic || r.Verifier != "" || r.Inline || r.Access != AccessRemoteAtomic):
			t.Errorf("%s: an atomic uses the responder resources, has no payload and needs remote atomic access: %+v", r.Name, r)
		case r.ConsumesRecv && r.Access != AccessNone && !(r.Imm && r.Access == AccessRemoteWrite):
			t.Errorf("%s: an op that consumes receives needs no remote access (WRITE with immediate: remote write only)", r.Name)
		case r.Imm && (!r.ConsumesRecv || r.LatPollsMemory || r.Verifier != VerifyServer):
			t.Errorf("%s: the immediate arrives in a receive completion, which the latency ping-pong waits for and --verify checks", r.Name)
		case (r.Verifier == "") != r.Atomic:
			t.Errorf("%s: verifier %q: every op but the atomics carries a payload to check", r.Name, r.Verifier)
		case r.Inline && r.Verifier != VerifyServer:
			t.Errorf("%s: the initiator posts the payload, so the target checks it", r.Name)
		case r.LatPollsMemory && !r.PingPong:
			t.Errorf("%s: polls memory in a latency test that is no ping-pong", r.Name)
		}
		if got, ok := OpOf(r.Name); !ok || got.Name != r.Name {
			t.Errorf("OpOf(%q) = %v, %v", r.Name, got.Name, ok)
		}
	}
	if !slices.Equal(names, result.Ops) {
		t.Errorf("op table %v, result.Ops %v: one row per op, in the same order", names, result.Ops)
	}
	if _, ok := OpOf("read_imm"); ok {
		t.Error("OpOf found an op that is not in the table")
	}
}

// TestOpTraits pins what each op is, trait by trait: the behaviour that
// the per-op switches had before the table.
func TestOpTraits(t *testing.T) {
	type row struct {
		atomic, readAtomic, recv, imm, pingPong, polls, inline, tcp, load bool
		access                                                            Access
		verifier                                                          string
		qpTypes                                                           string
	}
	want := map[string]row{
		result.OpSend:     {recv: true, pingPong: true, inline: true, tcp: true, verifier: VerifyServer, qpTypes: "rc uc ud"},
		result.OpWrite:    {pingPong: true, polls: true, inline: true, load: true, access: AccessRemoteWrite, verifier: VerifyServer, qpTypes: "rc uc"},
		result.OpRead:     {readAtomic: true, load: true, access: AccessRemoteRead, verifier: VerifyClient, qpTypes: "rc"},
		result.OpFetchAdd: {atomic: true, readAtomic: true, access: AccessRemoteAtomic, qpTypes: "rc"},
		result.OpCmpSwap:  {atomic: true, readAtomic: true, access: AccessRemoteAtomic, qpTypes: "rc"},
		// WRITE with immediate: remote write for the payload, a receive
		// for the immediate; its latency waits for the receive completion
		result.OpWriteImm: {recv: true, imm: true, pingPong: true, inline: true, access: AccessRemoteWrite, verifier: VerifyServer, qpTypes: "rc uc"},
		result.OpSendImm:  {recv: true, imm: true, pingPong: true, inline: true, verifier: VerifyServer, qpTypes: "rc uc"},
	}
	for _, r := range Ops() {
		got := row{r.Atomic, r.ReadAtomic, r.ConsumesRecv, r.Imm, r.PingPong, r.LatPollsMemory, r.Inline, r.TCP, r.Load, r.Access, r.Verifier,
			strings.Join(r.QPTypes, " ")}
		if got != want[r.Name] {
			t.Errorf("%s: traits %+v, want %+v", r.Name, got, want[r.Name])
		}
	}
	for qp, ops := range map[string][]string{
		"":              {result.OpSend, result.OpWrite, result.OpRead},
		result.QPTypeRC: {result.OpSend, result.OpWrite, result.OpRead},
		result.QPTypeUC: {result.OpSend, result.OpWrite},
		result.QPTypeUD: {result.OpSend},
		"xrc":           {result.OpSend, result.OpWrite, result.OpRead},
	} {
		if got := defaultOps(qp); !reflect.DeepEqual(got, ops) {
			t.Errorf("default ops of %q: %v, want %v", qp, got, ops)
		}
	}
	for qp, want := range map[string]string{result.QPTypeRC: "send, write, read, fetch_add, cmp_swap, write_imm and send_imm",
		result.QPTypeUC: "send, write, write_imm and send_imm", result.QPTypeUD: "send"} {
		if got := carriedBy(qp); got != want {
			t.Errorf("carriedBy(%s) = %q, want %q", qp, got, want)
		}
	}
	if got := tcpOps(); got != "send" {
		t.Errorf("tcpOps() = %q", got)
	}
}
