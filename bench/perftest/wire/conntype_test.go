package wire

import "testing"

// TestCompareConnectionType: a perftest >= 6.28 facing the drop-in with
// another -c hears it named as perftest words it (UC 1, UD 2).
func TestCompareConnectionType(t *testing.T) {
	for _, tc := range []struct {
		local, remote int32
		want          string
	}{
		{ConnUD, ConnRC, "connection_type mismatch: local=UD, remote=RC"},
		{ConnUC, ConnUD, "connection_type mismatch: local=UC, remote=UD"},
		{ConnUC, ConnUC, ""},
	} {
		l, r := writeLat64(), writeLat64()
		l.ConnectionType, r.ConnectionType = tc.local, tc.remote
		ms := Compare(l, r)
		switch {
		case tc.want == "" && len(ms) != 0:
			t.Errorf("%d, %d: %v, want none", tc.local, tc.remote, ms)
		case tc.want != "" && (len(ms) != 1 || ms[0].Error() != tc.want):
			t.Errorf("%d, %d: %v, want %q", tc.local, tc.remote, ms, tc.want)
		}
	}
}
