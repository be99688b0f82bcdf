package verbs

// #include "engine.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// perftest's BW peak for the drop-in facing perftest (bench/dropin/peer/loop.go,
// docs/perftest.md): the bandwidth sender's post and completion times of
// each work request, which perftest keeps as tposted[] and tcompleted[].
// Off by default: the C loop then tests one counter per work request.

// SetPeakStamps has the bandwidth sender (BWClient, BWClientMulti) stamp
// the post time of each of its first n work requests, counted from the
// last ResetCounters, and the completion time of each signaled one, into
// buf: mmap'd memory of at least 16·n bytes (AllocBuffer), which the
// caller keeps open until stamps are off again or the engine is closed.
// The stamps are zeroed. n 0 (or buf nil) turns stamping off. Call it only
// while no loop runs.
func (g *Engine) SetPeakStamps(buf *Buffer, n int) error {
	if buf == nil || n <= 0 {
		g.e.pt_stamps, g.e.pt_posted, g.e.pt_completed = 0, nil, nil
		return nil
	}
	if buf.Len() < 16*n {
		return fmt.Errorf("verbs: %d-byte buffer holds fewer than %d post and completion stamps", buf.Len(), n)
	}
	b := buf.Bytes()[:16*n]
	clear(b)
	g.e.pt_posted = (*C.int64_t)(unsafe.Pointer(&b[0]))
	g.e.pt_completed = (*C.int64_t)(unsafe.Pointer(&b[8*n]))
	g.e.pt_stamps = C.uint64_t(n)
	return nil
}

// PeakStamps are views of the stamps since SetPeakStamps (ns, engine
// clock): posted[k] the post of work request k, completed[k] the
// completion of signaled work request k (and of those before it), 0
// where none. They alias the buffer given to SetPeakStamps.
func (g *Engine) PeakStamps() (posted, completed []int64) {
	n := int(g.e.pt_stamps)
	if n == 0 {
		return nil, nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(g.e.pt_posted)), n), unsafe.Slice((*int64)(unsafe.Pointer(g.e.pt_completed)), n)
}
