package device

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestDeviceLacks: what the spec's device checks refuse as lacking stays
// verbs.ErrNotSupported (exit 3), its text unchanged; other refusals do not.
func TestDeviceLacks(t *testing.T) {
	lacks := fmt.Errorf("rxe0: atomics %w (atomic_cap 0)", spec.ErrNotSupported)
	err := Lacks(lacks)
	if !errors.Is(err, verbs.ErrNotSupported) || !errors.Is(err, spec.ErrNotSupported) || err.Error() != lacks.Error() {
		t.Errorf("Lacks(%v) = %v", lacks, err)
	}
	if err.Error() != "rxe0: atomics not supported by the device (atomic_cap 0)" {
		t.Errorf("text %q", err)
	}
	other := errors.New("--srq: rx depth 9 exceeds rxe0's max_srq_wr 8")
	if err := Lacks(other); err != other || errors.Is(err, verbs.ErrNotSupported) {
		t.Errorf("Lacks(%v) = %v", other, err)
	}
	if spec.ErrNotSupported.Error() != verbs.ErrNotSupported.Error() {
		t.Errorf("spec.ErrNotSupported %q, verbs.ErrNotSupported %q: the same text", spec.ErrNotSupported, verbs.ErrNotSupported)
	}
	if Lacks(nil) != nil {
		t.Error("Lacks(nil) is not nil")
	}
}
