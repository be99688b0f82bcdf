package wire

import (
	"bytes"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
)

// perftestBinRecord is the record perftest 6.06's ib_write_bw -R client
// sent in the test guest (QPN 0x23, PSN 0xc92fa8 as it printed them;
// RKey, VAddr and the GID ::ffff:192.0.2.1 of rxe1).
func perftestBinRecord() Dest {
	d := Dest{OutReads: 1, QPN: 0x23, PSN: 0xc92fa8, RKey: 0x1548, VAddr: 0x7f9213af8000}
	copy(d.GID[10:], []byte{0xff, 0xff, 192, 0, 2, 1})
	return d
}

// TestDestBinary: perftest's binary struct pingpong_dest (-R), field by
// field, and its errors.
func TestDestBinary(t *testing.T) {
	want := []byte{
		0, 0, 0, 0, // LID
		0, 0, 0, 1, // out_reads
		0, 0, 0, 0x23, // QPN
		0, 0xc9, 0x2f, 0xa8, // PSN
		0, 0, 0x15, 0x48, // RKey
		0, 0, 0, 0, // padding
		0, 0, 0x7f, 0x92, 0x13, 0xaf, 0x80, 0, // VAddr
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1, // GID
		0, 0, 0, 0, // SRQN
		0, 0, 0, 0, // GID index
	}
	got, err := perftestBinRecord().EncodeBinary(DestBinLen)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("EncodeBinary: % x, %v\nwant % x", got, err, want)
	}
	d, err := ParseBinary(want, "dest qp 0")
	if err != nil || d != perftestBinRecord() {
		t.Fatalf("ParseBinary: %+v, %v", d, err)
	}
	// 6.29: tail_markers_vaddr (0 here) between VAddr and the GID
	want629 := append(append(append([]byte{}, want[:32]...), make([]byte, 8)...), want[32:]...)
	if got, err := perftestBinRecord().EncodeBinary(DestBinLen629); err != nil || !bytes.Equal(got, want629) {
		t.Fatalf("EncodeBinary(%d): % x, %v\nwant % x", DestBinLen629, got, err, want629)
	}
	if d, err := ParseBinary(want629, "dest qp 0"); err != nil || d != perftestBinRecord() {
		t.Fatalf("ParseBinary of 6.29's record: %+v, %v", d, err)
	}
	for v, n := range map[string]int{"6.06": DestBinLen, "6.28": DestBinLen, "6.29": DestBinLen629, "6.31": DestBinLen629} {
		if got := DestBinLenFor(Version{Raw: v, Value: mustFloat(v)}); got != n {
			t.Errorf("DestBinLenFor(%s) = %d, want %d", v, got, n)
		}
	}
	for _, tc := range []struct {
		b    []byte
		want error
		text string
	}{
		{want[:40], ErrMalformed, "40 bytes, want 56 (perftest before 6.29) or 64 (6.29)"},
		{append(want, 0xaa), ErrMalformed, "57 bytes"},
		{append([]byte{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0x23}, want[12:]...), ErrRange, "QPN"},
		{append([]byte{0, 1, 0, 0}, want[4:]...), ErrRange, "LID"},
	} {
		_, err := ParseBinary(tc.b, "dest qp 0")
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), "dest qp 0") {
			t.Errorf("ParseBinary(% x): %v, want %v naming %q", tc.b, err, tc.want, tc.text)
		}
	}
	if _, err := (Dest{QPN: 1 << 24}).EncodeBinary(DestBinLen); !errors.Is(err, ErrRange) {
		t.Errorf("EncodeBinary of a 25-bit QPN: %v", err)
	}
	if _, err := perftestBinRecord().EncodeBinary(60); !errors.Is(err, ErrRange) {
		t.Errorf("EncodeBinary(60): %v", err)
	}
}

func mustFloat(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return f
}

// TestConnBinaryDest: with Binary, Dest swaps binary records (the client
// writes first).
func TestConnBinaryDest(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	done := make(chan error, 1)
	go func() {
		srv := &Conn{C: b, Binary: true}
		d, err := srv.Dest(Dest{QPN: 7, PSN: 9}, true, "dest qp 0")
		if err == nil && d != perftestBinRecord() {
			err = errors.New("server got the wrong record")
		}
		done <- err
	}()
	cli := &Conn{C: a, Client: true, Binary: true}
	d, err := cli.Dest(perftestBinRecord(), true, "dest qp 0")
	if err != nil || d.QPN != 7 || d.PSN != 9 {
		t.Fatalf("client: %+v, %v", d, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
