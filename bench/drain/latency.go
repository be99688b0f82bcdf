package drain

import "time"

// RoomRing is a Ring whose free room its sender can ask for.
type RoomRing interface {
	Ring
	RingRoom() uint64 // samples the ring can take before the loop must return full
}

// LatBatch runs one batch of a latency loop in ring mode (open loop: the C
// loop keeps its schedule while the drainer records its samples), on the
// lane's measuring goroutine: it waits, between two sends, until r has room
// for the n iterations (at most timeout), runs them, and marks the lane
// with done+n iterations at clock's time.
func (l *Lane) LatBatch(r RoomRing, n int, done int64, run func(n int) error, clock func() int64, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); r.RingRoom() < uint64(n) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
	}
	err := run(n)
	l.Mark(done+int64(n), clock(), false)
	return err
}
