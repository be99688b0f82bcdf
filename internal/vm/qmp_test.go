package vm

import (
	"bufio"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// fakeQMP serves one connection on a unix socket: it writes greet, then for
// each command line it reads answers with the next entry of replies.
func fakeQMP(t *testing.T, greet string, replies []string) (string, chan []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "q.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan []string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var cmds []string
		defer func() { got <- cmds }()
		if _, err := c.Write([]byte(greet)); err != nil {
			return
		}
		r := bufio.NewReader(c)
		for _, rep := range replies {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			cmds = append(cmds, strings.TrimSpace(line))
			if _, err := c.Write([]byte(rep)); err != nil {
				return
			}
		}
	}()
	return path, got
}

const greeting = `{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}}, "capabilities": ["oob"]}}` + "\n"

func TestQMPDo(t *testing.T) {
	ok := `{"return": {}}` + "\n"
	for _, tc := range []struct {
		name    string
		greet   string
		replies []string
		errRe   string // "" = success
	}{
		{"stop", greeting, []string{ok, ok}, ""},
		{"events skipped", greeting, []string{ok, `{"event": "STOP", "timestamp": {"seconds": 1}}` + "\n" + ok}, ""},
		{"refused", greeting, []string{ok, `{"error": {"class": "GenericError", "desc": "no"}}` + "\n"}, "qemu refused: GenericError: no"},
		{"no greeting", `{"return": {}}` + "\n", nil, "greeting: unexpected message"},
		{"garbage", "not json\n", nil, "greeting: bad message"},
		{"line too long", strings.Repeat("x", qmpMaxLine+10) + "\n", nil, "line too long"},
		{"closed early", greeting, []string{ok}, "qmp stop: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, got := fakeQMP(t, tc.greet, tc.replies)
			err := qmpDo(path, "stop")
			if tc.errRe == "" {
				if err != nil {
					t.Fatalf("qmpDo: %v", err)
				}
				cmds := <-got
				want := []string{`{"execute":"qmp_capabilities"}`, `{"execute":"stop"}`}
				if strings.Join(cmds, "|") != strings.Join(want, "|") {
					t.Fatalf("commands sent %q, want %q", cmds, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.errRe) {
				t.Fatalf("qmpDo: %v, want an error with %q", err, tc.errRe)
			}
		})
	}
	if err := qmpDo(filepath.Join(t.TempDir(), "none"), "cont"); err == nil || !strings.Contains(err.Error(), "qmp cont") {
		t.Fatalf("no socket: %v, want an error naming qmp cont", err)
	}
}

func TestQMPPath(t *testing.T) {
	if got := QMPPath("/tmp/x/g1.sock"); got != "/tmp/x/g1.sock.qmp" {
		t.Fatalf("QMPPath = %s", got)
	}
}
