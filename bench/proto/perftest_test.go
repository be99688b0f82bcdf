package proto

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestPerftestPeer: a perftest peer's version string where a header
// should be is named as perftest, with the drop-in to use (issue 22: it
// read "bad magic 0x362e3036").
func TestPerftestPeer(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		ver  string // "" : a plain bad magic
	}{
		{"debian 6.06", "6.06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "6.06"},
		{"6.30", "6.30\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "6.30"},
		{"suffix", "26.04-rc\x00\x00\x00\x00\x00\x00\x00\x00", "26.04-rc"},
		{"garbage after NUL", "6.06\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00", ""},
		{"no dot", "606\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", ""},
		{"ssh", "SSH-2.0-OpenSSH_9.2\r\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadFrame(bytes.NewReader([]byte(tc.in)))
			var pe *PerftestPeerError
			if !errors.Is(err, ErrBadMagic) || errors.As(err, &pe) != (tc.ver != "") {
				t.Fatalf("err %v", err)
			}
			if tc.ver != "" && (pe.Version != tc.ver || !strings.Contains(err.Error(), "the peer is perftest "+tc.ver) || !strings.Contains(err.Error(), "drop-in")) {
				t.Fatalf("err %v", err)
			}
		})
	}
}
