package boot

import (
	"context"
	"sync"
)

// Local is an in-process group of ranks for tests: NewLocal(n) returns one
// Bootstrap per rank; each must be driven by its own goroutine. A rank that
// stops calling (Close, or a test that "kills" it) leaves the others waiting
// until their ctx ends, as a dead process leaves a real launcher's barrier.
type Local struct {
	g    *localGroup
	rank int
	mu   sync.Mutex
	gen  int
	bad  bool
}

type localGroup struct {
	mu    sync.Mutex
	n     int
	round map[int]*localRound // by collective sequence number
}

type localRound struct {
	vals    [][]byte
	arrived int
	done    chan struct{}
}

// NewLocal makes a group of n ranks.
func NewLocal(n int) []*Local {
	g := &localGroup{n: n, round: map[int]*localRound{}}
	out := make([]*Local, n)
	for i := range out {
		out[i] = &Local{g: g, rank: i}
	}
	return out
}

func (l *Local) Rank() int        { return l.rank }
func (l *Local) Size() int        { return l.g.n }
func (l *Local) Launcher() string { return "local (in-process, tests)" }
func (l *Local) Close() error     { return nil }

// Barrier is Allgather of nothing.
func (l *Local) Barrier(ctx context.Context) error {
	_, err := l.Allgather(ctx, "barrier", nil)
	return err
}

// Allgather waits for every rank's call of the same sequence number.
func (l *Local) Allgather(ctx context.Context, name string, data []byte) ([][]byte, error) {
	l.mu.Lock()
	if l.bad {
		l.mu.Unlock()
		return nil, &OpError{"allgather", ErrBroken}
	}
	seq := l.gen
	l.gen++
	l.mu.Unlock()
	g := l.g
	g.mu.Lock()
	r := g.round[seq]
	if r == nil {
		r = &localRound{vals: make([][]byte, g.n), done: make(chan struct{})}
		g.round[seq] = r
	}
	r.vals[l.rank] = append([]byte(nil), data...)
	r.arrived++
	if r.arrived == g.n {
		close(r.done)
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.vals, nil
	case <-ctx.Done():
		l.mu.Lock()
		l.bad = true
		l.mu.Unlock()
		return nil, &OpError{"allgather " + name, ctx.Err()}
	}
}
