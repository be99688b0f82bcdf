package endpoint

import "testing"

func TestQPItersSplit(t *testing.T) {
	var sum int64
	for i := 0; i < 8; i++ {
		sum += QPIters(4003, 8, i)
	}
	if sum != 4003 || QPIters(4003, 8, 2) != 501 || QPIters(4003, 8, 3) != 500 {
		t.Errorf("split of 4003 over 8: sum %d, QP 2 %d, QP 3 %d", sum, QPIters(4003, 8, 2), QPIters(4003, 8, 3))
	}
}
