package perftest

import (
	"strings"
	"testing"
)

// TestSpecsUDSize: with -c UD and -m, the default size above the MTU is cut
// to it, as perftest cuts it (its bandwidth tools' 65536 B become the MTU),
// instead of a spec that fails validation; a larger -s is refused (as newer
// perftest refuses it); RC and UC keep theirs.
func TestSpecsUDSize(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		want       int
	}{
		{"ib_send_bw", "-c UD -m 1024 h", 1024},
		{"ib_send_bw", "-c UD -m 2048 -s 4096 h", 0},
		{"ib_send_bw", "-c UD -m 2048 -s 2048 h", 2048},
		{"ib_send_lat", "-c UD -m 1024 h", 2},
		{"ib_send_bw", "-c UC -m 1024 h", 65536},
		{"ib_send_bw", "-m 1024 h", 65536},
	} {
		o, err := Parse(Tools[tc.tool], strings.Fields(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		specs, err := Specs(o)
		if tc.want == 0 {
			if err == nil || !strings.Contains(err.Error(), "exceeds the path MTU") {
				t.Errorf("%s %s: %v, want the size refused", tc.tool, tc.args, err)
			}
			continue
		}
		if err != nil || len(specs) != 1 || specs[0].Size != tc.want {
			t.Errorf("%s %s: %v, %v; want one spec of %d B", tc.tool, tc.args, specs, err, tc.want)
		}
	}
}
