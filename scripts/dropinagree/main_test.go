package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bed writes a guest's /out of rounds rounds: perftest 6.06's recorded
// send_lat (t_typical 14.19 µs) and write_bw (BW average 62.21 MB/sec)
// client outputs, the figure scaled by scale(pairing, round).
func bed(t *testing.T, rounds int, scale func(p, r int) float64) string {
	t.Helper()
	dir := t.TempDir()
	lat, err := os.ReadFile("../../bench/perftest/testdata/perftest-6.06/send_lat.client.txt")
	if err != nil {
		t.Fatal(err)
	}
	bw, err := os.ReadFile("../../bench/perftest/testdata/perftest-6.06/write_bw.client.txt")
	if err != nil {
		t.Fatal(err)
	}
	list := fmt.Sprintf("rounds %d\nib_send_lat_n_1000\tib_send_lat -n 1000\nib_write_bw\tib_write_bw\n", rounds)
	if err := os.WriteFile(filepath.Join(dir, "agree.list"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	for p, pr := range pairings {
		for r := 1; r <= rounds; r++ {
			f := scale(p, r)
			l := bytes.Replace(lat, []byte("      14.19    "), []byte(fmt.Sprintf("      %.2f    ", 14.19*f)), 1)
			b := bytes.Replace(bw, []byte("   62.21  "), []byte(fmt.Sprintf("   %.2f  ", 62.21*f)), 1)
			for key, out := range map[string][]byte{"ib_send_lat_n_1000": l, "ib_write_bw": b} {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s.%s.%d.txt", key, pr.key, r)), out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return dir
}

func TestAgreementTable(t *testing.T) {
	// the drop-in client 10 % slower, the drop-in server as perftest; the
	// rounds drift by 1 % each
	dir := bed(t, 3, func(p, r int) float64 {
		f := 1 + float64(r)/100
		if p == 1 {
			f *= 1.1
		}
		return f
	})
	var out bytes.Buffer
	if err := run(&out, dir, 2000); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"| `ib_send_lat -n 1000` | t_typical [µs] | 14.47; q25 14.40 | 15.92, ratio 1.100 [",
		"; q25 15.84, ratio 1.100 [", // a time's better quartile: its 25th percentile
		"| 14.47, ratio 1.000 [0.9",
		"| `ib_write_bw` | BW average [MB/sec] | 63.45; q75 63.77 | 69.80, ratio 1.100 [",
		"; q75 70.14, ratio 1.100 [", // a rate's: its 75th
		"ib_send_lat -n 1000, perftest server, drop-in client: 15.77 15.92 16.08",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

func TestAgreementFails(t *testing.T) {
	for _, tc := range []struct {
		name    string
		break_  func(dir string)
		wantErr string // "": none; then wantOut is in the output
		wantOut string
	}{
		{"a failed run", func(dir string) {
			os.WriteFile(filepath.Join(dir, "agree.fail"), []byte("/out/x: server failed\n"), 0o644)
		}, "", "runs that failed in the guest (a run whose client printed its figure still counts):\n/out/x: server failed"},
		{"a missing run", func(dir string) { os.Remove(filepath.Join(dir, "ib_write_bw.rb-pt.2.txt")) }, "", "ib_write_bw, drop-in server, perftest client: 62.21 -"},
		{"no table", func(dir string) {
			os.WriteFile(filepath.Join(dir, "ib_write_bw.pt-rb.1.txt"), []byte("Couldn't connect to 127.0.0.1:18990\n"), 0o644)
		}, "", "left out: "},
		{"no run of a pairing", func(dir string) {
			os.Remove(filepath.Join(dir, "ib_write_bw.rb-pt.1.txt"))
			os.Remove(filepath.Join(dir, "ib_write_bw.rb-pt.2.txt"))
		}, "ib_write_bw, drop-in server, perftest client: no run printed its figure", ""},
		{"no list", func(dir string) { os.Remove(filepath.Join(dir, "agree.list")) }, "agree.list", ""},
		{"placement", func(dir string) {
			os.WriteFile(filepath.Join(dir, "agree.list"), []byte("rounds 2\nplacement pinned: server on CPU 1\nib_write_bw\tib_write_bw\n"), 0o644)
		}, "", "placement: pinned: server on CPU 1\n"},
		{"bad rounds", func(dir string) {
			os.WriteFile(filepath.Join(dir, "agree.list"), []byte("rounds x\nk\tib_write_bw\n"), 0o644)
		}, `rounds "x"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := bed(t, 2, func(p, r int) float64 { return 1 })
			tc.break_(dir)
			var out bytes.Buffer
			err := run(&out, dir, 100)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err %v, want one naming %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Errorf("err %v, want the table", err)
			case tc.wantErr == "" && !strings.Contains(out.String(), tc.wantOut):
				t.Errorf("output lacks %q:\n%s", tc.wantOut, out.String())
			}
		})
	}
}
