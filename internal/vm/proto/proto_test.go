package proto

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	run := Run{Argv: []string{"/bin/echo", "hi"}, Env: []string{"A=1"}, Dir: "/tmp", Timeout: 3}
	if err := w.JSON(TRun, run); err != nil {
		t.Fatal(err)
	}
	typ, p, err := ReadFrame(&buf)
	if err != nil || typ != TRun {
		t.Fatalf("ReadFrame: %q %v", typ, err)
	}
	got, err := DecodeRun(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Argv, " ") != "/bin/echo hi" || got.Dir != "/tmp" || got.Timeout != 3 || got.Env[0] != "A=1" {
		t.Fatalf("got %+v", got)
	}
}

func TestClientWait(t *testing.T) {
	var agent bytes.Buffer
	w := NewWriter(&agent)
	w.Frame(TStdout, []byte("out\n"))
	w.Frame(TStderr, []byte("err\n"))
	w.Frame(TLog, []byte("note\n"))
	w.JSON(TExit, Exit{Code: 3})
	var out, errb, log bytes.Buffer
	c := &Client{R: &agent, W: NewWriter(io.Discard), Stdout: &out, Stderr: &errb, Log: &log}
	e, err := c.Wait()
	if err != nil || e.Code != 3 {
		t.Fatalf("Wait: %+v %v", e, err)
	}
	if out.String() != "out\n" || errb.String() != "err\n" || log.String() != "note\n" {
		t.Fatalf("out %q err %q log %q", out.String(), errb.String(), log.String())
	}
}

func TestClientLost(t *testing.T) {
	var agent bytes.Buffer
	NewWriter(&agent).Frame(TStdout, []byte("partial"))
	c := &Client{R: &agent, W: NewWriter(io.Discard)}
	if _, err := c.Wait(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Wait on a cut connection: %v, want ErrUnexpectedEOF", err)
	}
}

func TestLimits(t *testing.T) {
	h := []byte{TStdout, 0xff, 0xff, 0xff, 0xff}
	if _, _, err := ReadFrame(bytes.NewReader(h)); !errors.Is(err, ErrTooLong) {
		t.Fatalf("huge length: %v, want ErrTooLong", err)
	}
	// a long data frame is split, a long control frame refused
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Frame(TStdout, make([]byte, MaxPayload+10)); err != nil {
		t.Fatal(err)
	}
	_, p1, _ := ReadFrame(&buf)
	_, p2, _ := ReadFrame(&buf)
	if len(p1) != MaxPayload || len(p2) != 10 {
		t.Fatalf("split: %d + %d", len(p1), len(p2))
	}
	if err := w.Frame(TRun, make([]byte, MaxPayload+1)); !errors.Is(err, ErrTooLong) {
		t.Fatalf("long control frame: %v", err)
	}
	for _, bad := range []string{`{}`, `{"argv":[""]}`, `{"argv":["x"],"timeout":-1}`, `nope`} {
		if _, err := DecodeRun([]byte(bad)); err == nil {
			t.Errorf("DecodeRun(%s): no error", bad)
		}
	}
	c := &Client{R: &buf, W: NewWriter(&buf)}
	if err := c.Signal(0); err == nil {
		t.Error("Signal(0): no error")
	}
}

// FuzzDecode: the agent's decoder of what a client sends (frames, then a run
// request) never panics, never allocates past MaxPayload, and what it accepts
// survives a round trip.
func FuzzDecode(f *testing.F) {
	var seed bytes.Buffer
	NewWriter(&seed).JSON(TRun, Run{Argv: []string{"true"}, Env: []string{"X=1"}})
	f.Add(seed.Bytes())
	f.Add([]byte{TSignal, 0, 0, 0, 1, 9})
	f.Add([]byte{TRun, 0, 0, 0, 2, '{', '}'})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			typ, p, err := ReadFrame(r)
			if err != nil {
				return
			}
			if len(p) > MaxPayload {
				t.Fatalf("payload %d > MaxPayload", len(p))
			}
			if typ != TRun {
				continue
			}
			run, err := DecodeRun(p)
			if err != nil {
				continue
			}
			var buf bytes.Buffer
			if err := NewWriter(&buf).JSON(TRun, run); err != nil {
				t.Fatal(err)
			}
			_, p2, err := ReadFrame(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := DecodeRun(p2); err != nil {
				t.Fatalf("re-encoded request rejected: %v", err)
			}
		}
	})
}
