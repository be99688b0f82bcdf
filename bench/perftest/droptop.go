package perftest

// LatLoop is a latency loop run in batches (bench's latency engines).
type LatLoop interface {
	Capacity() int
	ResetSamples()
	LatClient(n int) error
	Samples() []uint64
}

// DropTop2 is a LatLoop whose run leaves out its two largest samples, as
// perftest's latency report drops them: each batch's Samples holds back
// the two largest seen so far (giving back those they displace), and the
// two held when the run ends are never recorded. Use one per run.
type DropTop2 struct {
	LatLoop
	top  [2]uint64
	held int
	out  []uint64
}

// Samples is the batch's samples less those held back.
func (d *DropTop2) Samples() []uint64 {
	d.out = d.out[:0]
	for _, v := range d.LatLoop.Samples() {
		if d.held < 2 {
			d.top[d.held] = v
			d.held++
			continue
		}
		lo := 0
		if d.top[1] < d.top[0] {
			lo = 1
		}
		if v > d.top[lo] {
			v, d.top[lo] = d.top[lo], v
		}
		d.out = append(d.out, v)
	}
	return d.out
}
