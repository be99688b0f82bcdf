package boot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakePMI is a PMI-1 server for n ranks over net.Pipe, as hydra answers.
type fakePMI struct {
	mu      sync.Mutex
	kv      map[string]string
	n       int
	waiting []chan struct{}
	valMax  int
	// dropBarrier makes barrier_in never answered (a dead rank).
	dropBarrier bool
	// readMax > 0 reads each command as Slurm's mpi/pmi2 plugin reads a
	// PMI-1 command: one read of at most readMax bytes, taken as one command
	// (a longer line is cut, and its rest is read as the next command).
	readMax int
	kvsName string // default kvs_1_0
}

// next reads one command as hydra does (to the newline) or, with readMax,
// as Slurm does.
func (f *fakePMI) next(rd *bufio.Reader) (string, error) {
	if f.readMax == 0 {
		return rd.ReadString('\n')
	}
	buf := make([]byte, f.readMax)
	n, err := rd.Read(buf)
	return string(buf[:n]), err
}

func (f *fakePMI) serve(c net.Conn) {
	rd := bufio.NewReaderSize(c, 1<<16)
	for {
		line, err := f.next(rd)
		if err != nil {
			return
		}
		m, err := ParseLine(line)
		if err != nil {
			fmt.Fprintf(c, "cmd=error rc=-1\n")
			continue
		}
		switch m["cmd"] {
		case "init":
			fmt.Fprintf(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n")
		case "get_maxes":
			fmt.Fprintf(c, "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=%d\n", f.valMax)
		case "get_my_kvsname":
			kvs := f.kvsName
			if kvs == "" {
				kvs = "kvs_1_0"
			}
			fmt.Fprintf(c, "cmd=my_kvsname kvsname=%s rc=0\n", kvs)
		case "put":
			f.mu.Lock()
			f.kv[m["key"]] = m["value"]
			f.mu.Unlock()
			fmt.Fprintf(c, "cmd=put_result rc=0 msg=success\n")
		case "get":
			f.mu.Lock()
			v, ok := f.kv[m["key"]]
			f.mu.Unlock()
			if !ok {
				fmt.Fprintf(c, "cmd=get_result rc=-1 msg=key_%s_not_found\n", m["key"])
			} else {
				fmt.Fprintf(c, "cmd=get_result rc=0 msg=success value=%s\n", v)
			}
		case "barrier_in":
			if f.dropBarrier {
				continue
			}
			ch := make(chan struct{})
			f.mu.Lock()
			f.waiting = append(f.waiting, ch)
			if len(f.waiting) == f.n {
				for _, w := range f.waiting {
					close(w)
				}
				f.waiting = nil
			}
			f.mu.Unlock()
			<-ch
			fmt.Fprintf(c, "cmd=barrier_out\n")
		case "finalize":
			fmt.Fprintf(c, "cmd=finalize_ack\n")
			return
		}
	}
}

func startFake(t *testing.T, f *fakePMI) []*PMI {
	t.Helper()
	f.kv = map[string]string{}
	out := make([]*PMI, f.n)
	for r := range f.n {
		a, b := net.Pipe()
		go f.serve(b)
		p, err := NewPMI(a, fmt.Sprint(r), fmt.Sprint(f.n))
		if err != nil {
			t.Fatal(err)
		}
		out[r] = p
	}
	return out
}

func TestPMIAllgather(t *testing.T) {
	for _, c := range []struct {
		name   string
		n, val int
		size   int
	}{
		{"small", 3, 1024, 40},
		{"pieces", 4, 20, 300},
		{"empty", 2, 64, 0},
		// Slurm's mpi/pmi2: vallen_max 1024, but one read of 1024 bytes per command
		{"slurm", 3, 1024, 3000},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakePMI{n: c.n, valMax: c.val}
			if c.name == "slurm" {
				f.readMax, f.kvsName = 1024, "41.0"
			}
			ps := startFake(t, f)
			got := make([][][]byte, c.n)
			errs := make([]error, c.n)
			var wg sync.WaitGroup
			for r, p := range ps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					got[r], errs[r] = p.Allgather(ctx, "info", bytes.Repeat([]byte{byte('a' + r), ' ', '='}, c.size/3))
					if errs[r] == nil {
						errs[r] = p.Barrier(ctx)
					}
				}()
			}
			wg.Wait()
			for r := range c.n {
				if errs[r] != nil {
					t.Fatalf("rank %d: %v", r, errs[r])
				}
				for q := range c.n {
					want := bytes.Repeat([]byte{byte('a' + q), ' ', '='}, c.size/3)
					if !bytes.Equal(got[r][q], want) {
						t.Errorf("rank %d sees rank %d's value %q, want %q", r, q, got[r][q], want)
					}
				}
			}
			for _, p := range ps {
				if err := p.Close(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// A rank that never arrives: the barrier ends at the deadline, and the
// client refuses further collectives.
func TestPMIBarrierDeadline(t *testing.T) {
	ps := startFake(t, &fakePMI{n: 2, valMax: 1024, dropBarrier: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := ps[0].Barrier(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("barrier: %v, want a deadline error", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("barrier returned after %v", d)
	}
	if err := ps[0].Barrier(context.Background()); !errors.Is(err, ErrBroken) {
		t.Errorf("second barrier: %v, want ErrBroken", err)
	}
}

// A kvs name so long that no value fits on a PMI line is refused before
// any put.
func TestPMILongKVSName(t *testing.T) {
	ps := startFake(t, &fakePMI{n: 1, valMax: 1024, kvsName: strings.Repeat("k", 1000)})
	_, err := ps[0].Allgather(context.Background(), "info", []byte("x"))
	var oe *OpError
	if !errors.As(err, &oe) || oe.Op != "put" || !strings.Contains(err.Error(), "PMI line") {
		t.Fatalf("Allgather: %v, want a put error naming the PMI line limit", err)
	}
}

func TestLauncherName(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SLURM_JOB_ID": "12", "SLURM_STEP_ID": "0", "MPI_LOCALNRANKS": "1"}, "pmi-1 (PMI_FD; slurm srun, job 12.0)"},
		{map[string]string{"SLURM_JOB_ID": "12"}, "pmi-1 (PMI_FD; slurm srun, job 12)"},
		{map[string]string{"MPI_LOCALNRANKS": "3"}, "pmi-1 (PMI_FD; mpich hydra)"},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "3"}, "pmi-1 (PMI_FD; open mpi mpirun)"},
		{nil, "pmi-1 (PMI_FD)"},
	} {
		p := &PMI{via: launcherName(func(k string) string { return c.env[k] })}
		if got := p.Launcher(); got != c.want {
			t.Errorf("env %v: Launcher() = %q, want %q", c.env, got, c.want)
		}
	}
}

func TestParseLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{"cmd=barrier_out\n", map[string]string{"cmd": "barrier_out"}, ""},
		{"cmd=get_result rc=0 msg=success value=YWI\n", map[string]string{"cmd": "get_result", "rc": "0", "msg": "success", "value": "YWI"}, ""},
		{"cmd=x v=a=b", map[string]string{"cmd": "x", "v": "a=b"}, ""},
		{"rc=0\n", nil, "no cmd="},
		{"cmd=x junk\n", nil, "not key=value"},
		{"cmd=x a=1 a=2\n", nil, "twice"},
		{"", nil, "no cmd="},
		{strings.Repeat("x", maxLine+1), nil, "limit"},
	} {
		got, err := ParseLine(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseLine(%.20q) = %v, %v; want error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("ParseLine(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"cmd=barrier_out\n", "cmd=get_result rc=0 value=abc", "cmd==", "= =", "cmd=a\x00b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseLine(s)
		if err == nil && m["cmd"] == "" {
			t.Fatalf("ParseLine(%q) accepted a line without cmd", s)
		}
	})
}

func TestLocal(t *testing.T) {
	ls := NewLocal(3)
	var wg sync.WaitGroup
	for _, l := range ls[:2] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if _, err := l.Allgather(ctx, "x", []byte{1}); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("rank %d: %v, want deadline (rank 2 never came)", l.Rank(), err)
			}
		}()
	}
	wg.Wait()
}

// TestUnderHydra runs this test binary as 3 ranks under MPICH's mpiexec
// (hydra) when it is installed: the real launcher's PMI-1 server.
func TestUnderHydra(t *testing.T) {
	if os.Getenv("PMI_FD") != "" {
		return // a rank: TestHydraRank does the work
	}
	mpiexec, err := exec.LookPath("mpiexec.hydra")
	if err != nil {
		t.Skip("mpiexec.hydra not installed (Debian package mpich)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, mpiexec, "-np", "3", os.Args[0], "-test.run", "^TestHydraRank$", "-test.v").CombinedOutput()
	if err != nil {
		t.Fatalf("mpiexec: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "HYDRA-RANK-OK"); n != 3 {
		t.Fatalf("%d ranks passed, want 3:\n%s", n, out)
	}
}

func TestHydraRank(t *testing.T) {
	if os.Getenv("PMI_FD") == "" {
		return // a helper process: TestUnderHydra runs it under mpiexec
	}
	b, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	big := bytes.Repeat([]byte{byte(b.Rank())}, 3000) // several pieces
	all, err := b.Allgather(ctx, "t", big)
	if err != nil {
		t.Fatal(err)
	}
	for r, v := range all {
		if len(v) != 3000 || v[0] != byte(r) {
			t.Fatalf("rank %d's value: %d bytes, first %v", r, len(v), v[:1])
		}
	}
	if err := b.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("HYDRA-RANK-OK %d of %d\n", b.Rank(), b.Size())
}
