package admit

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestParseAllow(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"10.0.0.0/8", "[10.0.0.0/8]", ""},
		{"10.1.2.3/8,fd00::/8", "[10.0.0.0/8 fd00::/8]", ""},
		{" 192.0.2.7 , ::1", "[192.0.2.7/32 ::1/128]", ""},
		{"10.0.0.0/33", "", `"10.0.0.0/33" is neither`},
		{"host.example", "", "neither a CIDR prefix"},
		{",", "", "empty list"},
	} {
		got, err := ParseAllow(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseAllow(%q): %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("ParseAllow(%q): %v %v, want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestStartupCaps(t *testing.T) {
	for _, tc := range []struct {
		nofile uint64
		want   int
	}{{0, MinStartups}, {20, MinStartups}, {64, 16}, {1024, 496}, {1 << 20, MaxStartupsCeiling}} {
		if got := ForFDs(tc.nofile); got != tc.want {
			t.Errorf("ForFDs(%d) = %d, want %d", tc.nofile, got, tc.want)
		}
	}
	for _, tc := range []struct{ addr, want string }{
		{"192.0.2.7", "192.0.2.7/32"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
	} {
		if got := SourceOf(netip.MustParseAddr(tc.addr)).String(); got != tc.want {
			t.Errorf("SourceOf(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}
