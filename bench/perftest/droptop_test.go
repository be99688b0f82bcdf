package perftest

import (
	"slices"
	"testing"
)

type fakeLoop struct{ batches [][]uint64 }

func (f *fakeLoop) Capacity() int         { return 100 }
func (f *fakeLoop) ResetSamples()         {}
func (f *fakeLoop) LatClient(n int) error { return nil }
func (f *fakeLoop) Samples() []uint64 {
	b := f.batches[0]
	f.batches = f.batches[1:]
	return b
}

// TestDropTop2: over a run's batches, every sample but the two largest is
// recorded once, whichever batches the largest come in.
func TestDropTop2(t *testing.T) {
	batches := [][]uint64{{5, 90, 3}, {7, 100, 2, 8}, {1}, {50, 4}}
	d := &DropTop2{LatLoop: &fakeLoop{batches: slices.Clone(batches)}}
	var got []uint64
	for range batches {
		got = append(got, d.Samples()...)
	}
	slices.Sort(got)
	if want := []uint64{1, 2, 3, 4, 5, 7, 8, 50}; !slices.Equal(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
}
