//go:build pmix && cgo

package boot

// PMIx client for Open MPI's mpirun (and srun --mpi=pmix), through libpmix
// (Debian: libpmix-dev). Only built with -tags pmix, so the default binary
// keeps no PMIx dependency. The C calls block; a call past its ctx deadline
// is abandoned on its thread and the client is marked broken.

/*
#cgo pkg-config: pmix
#include <pmix.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static pmix_proc_t rb_me;

static int rb_init(uint32_t *rank, uint32_t *size) {
	pmix_status_t rc = PMIx_Init(&rb_me, NULL, 0);
	if (rc != PMIX_SUCCESS) return rc;
	pmix_proc_t wild;
	PMIX_PROC_CONSTRUCT(&wild);
	PMIX_LOAD_PROCID(&wild, rb_me.nspace, PMIX_RANK_WILDCARD);
	pmix_value_t *val = NULL;
	rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
	if (rc != PMIX_SUCCESS) return rc;
	*size = val->data.uint32;
	PMIX_VALUE_RELEASE(val);
	*rank = rb_me.rank;
	return 0;
}

static int rb_put(const char *key, char *data, size_t len) {
	pmix_value_t v;
	PMIX_VALUE_CONSTRUCT(&v);
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = data;
	v.data.bo.size = len;
	int rc = PMIx_Put(PMIX_GLOBAL, key, &v); // copies the value
	if (rc != PMIX_SUCCESS) return rc;
	return PMIx_Commit();
}

static int rb_fence(int collect) {
	pmix_info_t info;
	bool c = collect != 0;
	PMIX_INFO_CONSTRUCT(&info);
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &c, PMIX_BOOL);
	int rc = PMIx_Fence(NULL, 0, &info, 1);
	PMIX_INFO_DESTRUCT(&info);
	return rc;
}

static int rb_get(uint32_t rank, const char *key, char **out, size_t *len) {
	pmix_proc_t p;
	PMIX_PROC_CONSTRUCT(&p);
	PMIX_LOAD_PROCID(&p, rb_me.nspace, rank);
	pmix_value_t *val = NULL;
	int rc = PMIx_Get(&p, key, NULL, 0, &val);
	if (rc != PMIX_SUCCESS) return rc;
	if (val->type != PMIX_BYTE_OBJECT) { PMIX_VALUE_RELEASE(val); return PMIX_ERR_TYPE_MISMATCH; }
	*len = val->data.bo.size;
	*out = malloc(*len ? *len : 1);
	if (*len) memcpy(*out, val->data.bo.bytes, *len);
	PMIX_VALUE_RELEASE(val);
	return 0;
}

static int rb_finalize(void) { return PMIx_Finalize(NULL, 0); }
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"sync"
	"unsafe"
)

func init() { pmixDial = dialPMIx }

// PMIx is the libpmix client.
type PMIx struct {
	rank, size int
	mu         sync.Mutex
	broken     bool
}

type pmixError C.int

func (e pmixError) Error() string { return C.GoString(C.PMIx_Error_string(C.pmix_status_t(e))) }

func dialPMIx() (Bootstrap, error) {
	var rank, size C.uint32_t
	if rc := C.rb_init(&rank, &size); rc != 0 {
		return nil, &OpError{"PMIx_Init", pmixError(rc)}
	}
	return &PMIx{rank: int(rank), size: int(size)}, nil
}

func (p *PMIx) Rank() int { return p.rank }
func (p *PMIx) Size() int { return p.size }

// Launcher is "pmix (libpmix)", with the launcher's name when known:
// "pmix (libpmix; open mpi mpirun)".
func (p *PMIx) Launcher() string {
	if via := launcherName(os.Getenv); via != "" {
		return "pmix (libpmix; " + via + ")"
	}
	return "pmix (libpmix)"
}

func (p *PMIx) Close() error {
	if rc := C.rb_finalize(); rc != 0 {
		return &OpError{"PMIx_Finalize", pmixError(rc)}
	}
	return nil
}

// call runs f on its own goroutine and waits until ctx ends.
func (p *PMIx) call(ctx context.Context, op string, f func() error) error {
	p.mu.Lock()
	if p.broken {
		p.mu.Unlock()
		return &OpError{op, ErrBroken}
	}
	p.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			p.mu.Lock()
			p.broken = true
			p.mu.Unlock()
			return &OpError{op, err}
		}
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		p.broken = true
		p.mu.Unlock()
		return &OpError{op, ctx.Err()}
	}
}

func (p *PMIx) Barrier(ctx context.Context) error {
	return p.call(ctx, "PMIx_Fence", func() error {
		if rc := C.rb_fence(0); rc != 0 {
			return pmixError(rc)
		}
		return nil
	})
}

func (p *PMIx) Allgather(ctx context.Context, name string, data []byte) ([][]byte, error) {
	key := C.CString("rdmabench." + name)
	defer C.free(unsafe.Pointer(key))
	var out [][]byte
	err := p.call(ctx, "allgather "+name, func() error {
		buf := C.CBytes(append(data, 0)) // C memory; PMIx_Put copies it
		rc := C.rb_put(key, (*C.char)(buf), C.size_t(len(data)))
		C.free(buf)
		if rc != 0 {
			return fmt.Errorf("PMIx_Put: %w", pmixError(rc))
		}
		if rc := C.rb_fence(1); rc != 0 {
			return fmt.Errorf("PMIx_Fence: %w", pmixError(rc))
		}
		for r := range p.size {
			var v *C.char
			var n C.size_t
			if rc := C.rb_get(C.uint32_t(r), key, &v, &n); rc != 0 {
				return fmt.Errorf("PMIx_Get rank %d: %w", r, pmixError(rc))
			}
			out = append(out, C.GoBytes(unsafe.Pointer(v), C.int(n)))
			C.free(unsafe.Pointer(v))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
