package verbs

/*
#include <stdlib.h>
#include "engine.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// BWClientMulti drives several bandwidth senders round robin on the calling
// thread, in one C call, until every target is complete, the engine clock
// passes until, or one sample buffer is nearly full (full=true: drain every
// engine's samples and call again). The engines' CQs must be distinct. Event
// mode is not supported (a wait on one CQ would stall the others).
func BWClientMulti(engs []*Engine, until int64) (full bool, err error) {
	if len(engs) == 1 {
		return engs[0].BWClient(until)
	}
	ptrs := make([]*C.rb_engine, len(engs))
	for i, g := range engs {
		ptrs[i] = g.e
	}
	var which C.int
	rc := C.rb_bw_client_multi(&ptrs[0], C.int(len(ptrs)), C.int64_t(until), &which)
	if rc == C.RB_FULL {
		return true, nil
	}
	return false, engs[int(which)].err(rc, "bandwidth sender")
}

// BWServerMulti receives streamed messages on several engines from the
// calling thread, one C loop polling every engine's receive CQ in turn,
// until each engine reached its SetStop count (nil) or has stopped and
// one was aborted (ErrAborted), or the first error; which is the engine
// concerned. The engines' CQs must be distinct; event mode is not
// supported (a wait on one CQ would stall the others).
func BWServerMulti(engs []*Engine) (which int, err error) {
	if len(engs) == 0 {
		return 0, nil
	}
	for i, g := range engs {
		if g.cfg.Event {
			return i, fmt.Errorf("verbs: one receiver thread for several QPs busy-polls: engine %d is in event mode", i)
		}
	}
	ptrs := (**C.rb_engine)(C.calloc(C.size_t(len(engs)), C.size_t(unsafe.Sizeof(uintptr(0)))))
	if ptrs == nil {
		return 0, &Error{Op: "calloc", Err: syscall.ENOMEM}
	}
	defer C.free(unsafe.Pointer(ptrs))
	list := unsafe.Slice(ptrs, len(engs))
	for i, g := range engs {
		list[i] = g.e
	}
	var w C.int
	rc := C.rb_bw_server_multi(ptrs, C.int(len(engs)), &w)
	return int(w), engs[int(w)].err(rc, "bandwidth receiver")
}
