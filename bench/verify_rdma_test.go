package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testhook"
	"github.com/rdmabench/rdmabench/internal/testutil"
)

// checkVerified checks that every result of back carries the verify pass
// of its spec: the message count, the bytes and the checking side.
func checkVerified(t *testing.T, back *result.Document, specs []spec.Spec) {
	t.Helper()
	for i, r := range back.Results {
		s := specs[i]
		v := r.Verify
		want := kinds.VerifyMessages(s)
		if v == nil || v.Messages != int64(want) || v.Bytes != int64(want*s.Size) || v.CheckedBy != kinds.VerifyChecker(s.Op) {
			t.Errorf("%s: verify %+v, want %d messages, %d bytes, checked by the %s", s.Name(), v, want, want*s.Size, kinds.VerifyChecker(s.Op))
			continue
		}
		t.Logf("%s: %d messages (%d bytes) checked by the %s", s.Name(), v.Messages, v.Bytes, v.CheckedBy)
	}
}

// TestRDMAVerify: --verify passes on clean SEND, WRITE and READ runs in
// both modes (a size with a tail that is not a whole 8-byte word, and 64
// KiB), with per-op registration, on UD, and on 4 QPs sharing an SRQ.
func TestRDMAVerify(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpWrite, result.OpRead}, Modes: []string{result.ModeLat, result.ModeBW},
		Sizes: []int{13, 65536}, Template: spec.Spec{Iters: 200, Warmup: -1, TxDepth: 16, Verify: true}})
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpWrite, result.OpRead}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 300, Warmup: -1, TxDepth: 16, MRMode: result.MRModePerOp, Verify: true}})...)
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{1024},
		Template: spec.Spec{Iters: 300, Warmup: -1, TxDepth: 16, QPType: result.QPTypeUD, Verify: true}})...)
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 800, Warmup: -1, TxDepth: 16, QPs: 4, SRQ: true, Verify: true}})...)
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	checkVerified(t, checkDoc(t, doc, specs), specs)
}

// TestRDMAVerifyCorrupt: a byte flipped in every received message (the
// testhook.VerifyCorrupt hook, right before the check) fails the test with a
// *kinds.VerifyError naming the op, the checking side, the offset and both bytes:
// the server for SEND and WRITE, the client for READ, in both modes.
func TestRDMAVerifyCorrupt(t *testing.T) {
	requireDevice(t)
	const at = 1000
	testhook.VerifyCorrupt = at
	defer func() { testhook.VerifyCorrupt = -1 }()
	for _, op := range []string{result.OpSend, result.OpWrite, result.OpRead} {
		for _, mode := range []string{result.ModeLat, result.ModeBW} {
			t.Run(op+"/"+mode, func(t *testing.T) {
				specs := plan(t, spec.Plan{Ops: []string{op}, Modes: []string{mode}, Sizes: []int{4096}, Template: spec.Spec{Iters: 200, Warmup: -1, TxDepth: 16, Verify: true}})
				_, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
				var ve *kinds.VerifyError
				if !errors.As(err, &ve) {
					t.Fatalf("planted corruption: %v (%T), want a *kinds.VerifyError", err, err)
				}
				checker := kinds.VerifyChecker(op)
				if ve.Op != op || ve.Checker != checker || ve.Message != 0 || ve.Offset != at || ve.Seen != ve.Expected^0xff || ve.Len != 4096 {
					t.Errorf("kinds.VerifyError %+v: want %s checked by the %s, message 0, offset %d, seen = expected^0xff", ve, op, checker, at)
				}
				want := fmt.Sprintf("--verify: %s payload corrupted, seen by the %s in message 0 of %d (QP 0): offset %d of 4096: expected byte 0x%02x, seen 0x%02x",
					strings.ToUpper(op), checker, spec.DefaultVerifyMessages, at, ve.Expected, ve.Seen)
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error text:\n  %s\nwant it to contain\n  %s", err, want)
				}
				t.Logf("%v", err)
			})
		}
	}
}

// TestRDMASRQ: SEND latency and bandwidth with --srq (both sides' QPs in
// latency, the server's in bandwidth), bandwidth on 4 QPs sharing one SRQ
// (with fewer receives than the QPs' outstanding sends: RNR retries), and
// UD; every result says srq, and the payloads are checked.
func TestRDMASRQ(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Sizes: []int{64},
		Template: spec.Spec{Iters: 1000, Warmup: -1, SRQ: true, Verify: true}})
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeBW}, Sizes: []int{65536},
		Template: spec.Spec{Iters: 500, Warmup: -1, TxDepth: 32, SRQ: true, Verify: true}})...)
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 1003, Warmup: -1, TxDepth: 32, QPs: 4, Threads: 2, SRQ: true, Verify: true}})...)
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 1000, Warmup: -1, TxDepth: 32, RxDepth: 64, QPs: 4, SRQ: true}})...)
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{512},
		Template: spec.Spec{Iters: 500, Warmup: -1, TxDepth: 32, QPType: result.QPTypeUD, SRQ: true}})...)
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	for i, r := range back.Results {
		if !r.SRQ {
			t.Errorf("%s: result lacks srq", specs[i].Name())
		}
		if r.QPs > 1 {
			checkPerQP(t, r, r.QPs, specs[i].NumThreads())
		}
		t.Logf("%s: p50 %v, %.1f MB/s", specs[i].Name(), r.Latency.P50, r.Bandwidth.MBPerSec)
	}
	var verified []spec.Spec
	var vdoc result.Document
	for i, s := range specs {
		if s.Verify {
			verified = append(verified, s)
			vdoc.Results = append(vdoc.Results, back.Results[i])
		}
	}
	checkVerified(t, &vdoc, verified)
}

// TestRDMASRQRDMACM: QPs that rdma_cm creates take their receives from the
// SRQ too (rdma_create_qp with ibv_qp_init_attr.srq), on 2 QPs, verified.
func TestRDMASRQRDMACM(t *testing.T) {
	testutil.CMAddress(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 300, Warmup: -1, TxDepth: 16, RDMACM: true, SRQ: true, Verify: true}})
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 300, Warmup: -1, TxDepth: 16, QPs: 2, RDMACM: true, SRQ: true, Verify: true}})...)
	cfg := runCfg(specs)
	cfg.Client.RDMACM = true
	doc, err := RunLoopback(context.Background(), cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	for i, r := range back.Results {
		if !r.SRQ || r.Connection == nil || r.Connection.Method != result.ConnRDMACM {
			t.Errorf("%s: srq %v, connection %+v", specs[i].Name(), r.SRQ, r.Connection)
		}
	}
	checkVerified(t, back, specs)
}
