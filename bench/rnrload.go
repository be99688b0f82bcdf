package bench

import (
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/verbs"
)

// The server's side of an RNR storm (Load.RNR, rdmabench isolation's
// rnr-storm): the client's load QPs stream SENDs, and the server keeps one
// receive posted on each (the load spec's rx depth 1), re-posting after
// each arrival from one thread that polls every load QP's receive CQ. The
// senders outrun it and collect receiver-not-ready NAKs, each retried
// after min_rnr_timer (rnr_retry 7: forever), so the attacker survives.

// startRNRReceivers starts the receivers of s's RNR load QPs in eps (none
// without Load.RNR) on cpu; the returned function aborts them and waits.
func (s *Server) startRNRReceivers(spec Spec, eps *testEndpoints, cpu int) (stop func()) {
	if spec.Load == nil || !spec.Load.RNR || len(eps.loads) == 0 {
		return func() {}
	}
	engs := make([]*verbs.Engine, len(eps.loads))
	for i, ep := range eps.loads {
		engs[i] = ep.eng
	}
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			defer responderThreads.enter()()
			defer unlockThread()
			if err := lockThread(cpu, eps.loads[0].dev.numa.cpus); err != nil {
				return err
			}
			which, err := verbs.BWServerMulti(engs)
			if err != nil && !errors.Is(err, verbs.ErrAborted) {
				return fmt.Errorf("RNR storm receiver, load QP %d: %w", which, err)
			}
			return nil
		}()
	}()
	return func() {
		for _, e := range engs {
			e.Abort()
		}
		if err := <-done; err != nil {
			s.log.Printf("%s: %v", spec.Name(), err)
		}
	}
}
