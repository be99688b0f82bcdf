package peer

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestPerftestQPType: against perftest the drop-in runs UC with SEND and
// WRITE and UD with SEND, as perftest allows them, and refuses the rest by
// name (the option and what is supported); -R stays RC only.
func TestPerftestQPType(t *testing.T) {
	for _, tc := range []struct {
		qp, op, mode string
		cm           bool
		refused      string // "" when supported
	}{
		{"", result.OpSend, result.ModeLat, false, ""},
		{"rc", result.OpRead, result.ModeBW, true, ""},
		{"uc", result.OpSend, result.ModeLat, false, ""},
		{"uc", result.OpWrite, result.ModeLat, false, ""},
		{"uc", result.OpSend, result.ModeBW, false, ""},
		{"uc", result.OpWrite, result.ModeBW, false, ""},
		{"ud", result.OpSend, result.ModeLat, false, ""},
		{"ud", result.OpSend, result.ModeBW, false, ""},
		{"uc", result.OpRead, result.ModeLat, false, "-c UC with read"},
		{"ud", result.OpWrite, result.ModeBW, false, "-c UD with write"},
		{"ud", result.OpSend, result.ModeLat, true, "-c UD with -R: rdmabench connects RC QPs only through rdma_cm; perftest 6.06 runs UD with -R"},
		{"ud", result.OpSend, result.ModeBW, true, "UD without -R, or RC with -R"},
		{"uc", result.OpWrite, result.ModeBW, true, `-c UC with -R: perftest refuses it too ("UC is not supported in librdmacm", perftest 6.06`},
		{"uc", result.OpSend, result.ModeLat, true, "UC without -R"},
		{"xrc", result.OpSend, result.ModeBW, false, "-c XRC (RC, UC and UD)"},
	} {
		s := spec.Spec{QPType: tc.qp, Op: tc.op, Mode: tc.mode, RDMACM: tc.cm, Size: 2, Iters: 10}
		err := Supports(s)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s %s %s -R=%v: %v, want supported", tc.qp, tc.op, tc.mode, tc.cm, err)
		case tc.refused != "" && (!errors.Is(err, ErrPerftestUnsupported) || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s %s %s -R=%v: %v, want %q", tc.qp, tc.op, tc.mode, tc.cm, err, tc.refused)
		}
	}
}

// TestPerftestQKeyIsVerbs: perftest's UD Q_Key is the one verbs gives UD
// QPs by default (0x11111111).
func TestPerftestQKeyIsVerbs(t *testing.T) {
	if perftest.QKey != verbs.DefaultQKey {
		t.Fatalf("perftest.QKey 0x%x, verbs.DefaultQKey 0x%x", perftest.QKey, verbs.DefaultQKey)
	}
}
