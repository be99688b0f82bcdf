package doctor

import (
	"errors"
	"net/netip"
	"testing"
)

// TestPortGIDs: GIDs the caller read through verbs are used as given (no
// sysfs read of every slot); without them, or when they fail, sysfs is read.
func TestPortGIDs(t *testing.T) {
	v4 := netip.AddrFrom16(netip.MustParseAddr("192.0.2.1").As16())
	given := []GID{{Index: 1, Addr: v4, Type: "RoCE v2", Netdev: "dummy0"}}
	empty := t.TempDir() // no sysfs at all
	for _, c := range []struct {
		name string
		gids func() ([]GID, error)
		want int
	}{
		{"from verbs", func() ([]GID, error) { return given, nil }, 1},
		{"verbs failed: sysfs (empty here)", func() ([]GID, error) { return nil, errors.New("no") }, 0},
		{"none given: sysfs (empty here)", nil, 0},
	} {
		got := portGIDs(Input{Root: empty, GIDs: c.gids}, empty)
		if len(got) != c.want {
			t.Errorf("%s: %d GIDs, want %d", c.name, len(got), c.want)
			continue
		}
		if c.want == 1 && (got[0].gid != v4 || got[0].typ != "RoCE v2" || got[0].ndev != "dummy0" || got[0].index != 1) {
			t.Errorf("%s: got %+v", c.name, got[0])
		}
	}
}
