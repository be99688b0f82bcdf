package spec

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func TestMRModeValidate(t *testing.T) {
	base := Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 4096, Iters: 10, TxDepth: 8, CQMod: 1, RxDepth: 8}
	for _, tt := range []struct {
		name string
		mod  func(*Spec)
		want string // "" = valid
	}{
		{"default", func(s *Spec) {}, ""},
		{"pool", func(s *Spec) { s.MRMode = result.MRModePool }, ""},
		{"per-op", func(s *Spec) { s.MRMode = result.MRModePerOp }, ""},
		{"odp", func(s *Spec) { s.MRMode = result.MRModeODP; s.HugePages = true }, ""},
		{"unknown", func(s *Spec) { s.MRMode = "perop" }, `MR mode "perop" unknown; valid: pool, per-op, odp`},
		{"tcp per-op", func(s *Spec) { s.Op, s.Transport, s.MRMode = result.OpSend, result.TransportTCP, result.MRModePerOp }, "--mr-mode per-op applies to RDMA tests"},
		{"tcp hugepages", func(s *Spec) { s.Op, s.Transport, s.HugePages = result.OpSend, result.TransportTCP, true }, "--hugepages applies to RDMA buffers"},
		{"per-op inline", func(s *Spec) { s.MRMode, s.Size, s.Inline, s.InlinePolicy = result.MRModePerOp, 64, 64, InlineSize }, "--mr-mode per-op with --inline-size 64"},
		{"per-op above inline", func(s *Spec) { s.MRMode, s.Size, s.Inline, s.InlinePolicy = result.MRModePerOp, 128, 64, InlineSize }, ""},
		{"per-op read inline", func(s *Spec) {
			s.Op, s.MRMode, s.Size, s.Inline, s.InlinePolicy = result.OpRead, result.MRModePerOp, 64, 64, InlineSize
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			tt.mod(&s)
			err := s.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}
