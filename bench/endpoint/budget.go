package endpoint

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spread"
	"github.com/rdmabench/rdmabench/verbs"
	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// The resource budget: what one side of a test maps, registers and opens,
// computed from its Spec before anything exists (NeedOf), and the
// limits a server (--max-memory, --max-qps) or a client and loopback run
// hold every test to. The server refuses a test over its budget with the
// figures, the session stays in step, and the client exits 3 (CodeBudget).

// ErrOverBudget: a test needs more memory or QPs than a budget allows.
// *BudgetError unwraps to it.
var ErrOverBudget = errors.New("over the resource budget")

// CodeBudget is the RemoteError code of a server refusing a test over its
// budget (the client exits 3, as for its own budget).
const CodeBudget = "budget"

// Budget defaults and bounds.
const (
	// MaxBudgetQPs bounds --max-qps.
	MaxBudgetQPs = 1 << 20
	// MaxBudgetMemory bounds --max-memory, bytes (1 PiB).
	MaxBudgetMemory = int64(1) << 50
	// unknownMemTotal is the default budget when /proc/meminfo has no MemTotal.
	unknownMemTotal = int64(1) << 30
)

// Need is what one side of one test maps and opens, bytes and QPs.
type Need struct {
	Registered int64 // the pools: mapped and registered once per test
	Unregister int64 // mapped but not registered up front: per-op client buffers, TCP message buffers
	Engine     int64 // the C loops' sample and post-time arrays (calloc)
	QPs        int   // measured and load QPs
}

// Memory is the whole of n, bytes.
func (n Need) Memory() int64 { return n.Registered + n.Unregister + n.Engine }

// Add sums two needs (both sides of a loopback run).
func (n Need) Add(o Need) Need {
	return Need{n.Registered + o.Registered, n.Unregister + o.Unregister, n.Engine + o.Engine, n.QPs + o.QPs}
}

// NeedOf is what one side (client or server) of s maps and opens: the same
// pools NewMemory registers (verbs.PoolConfig.MappedBytes), the per-op
// client's unregistered buffers, and each engine's arrays. s must be
// valid (Validate).
func NeedOf(s spec.Spec, client bool) Need {
	engine := func(tx int) int64 { return int64(SampleCap())*8 + int64(tx)*8 + 1024 }
	if s.Transport == result.TransportTCP { // one socket engine: the message, the receive chunk, the samples
		return Need{Unregister: int64(s.Size) + 256<<10, Engine: engine(0)}
	}
	n := Need{QPs: s.NumQPs()}
	n.Registered = PoolConfig(s, client, false, s.NumQPs(), false, s.HugePages).MappedBytes()
	n.Engine = int64(s.NumQPs()) * engine(s.TxDepth)
	n.Registered += spread.Bytes(s, client) // the workload knobs' region or per-MR buffers
	if s.IdleQPs > 0 {                      // idle QPs: a pool buffer each, no engine
		n.Registered += PoolConfig(s.IdleSpec(), client, false, s.IdleQPs, false, false).MappedBytes()
		n.QPs += s.IdleQPs
	}
	if client && s.MRModeOrDefault() == result.MRModePerOp {
		n.Unregister = int64(s.NumQPs()) * verbs.PoolConfig{BufSize: 2 * endpointArea(s), Count: 1, HugePages: s.HugePages}.MappedBytes()
	}
	if s.Load != nil && s.Load.QPs > 0 {
		l := s.LoadSpec()
		n.Registered += PoolConfig(l, client, false, s.Load.QPs, false, s.HugePages).MappedBytes()
		n.Engine += int64(s.Load.QPs) * engine(l.TxDepth)
		n.QPs += s.Load.QPs
	}
	if s.Load != nil && client { // the registration churn's buffer (load.go)
		n.Registered += int64(s.Load.ChurnSize)
	}
	return n
}

// Budget is the memory and QPs one process allows its tests at once.
type Budget struct {
	MaxMemory int64  // bytes; 0: the default (DefaultBudget)
	MaxQPs    int    // 0: DefaultMaxQPs
	Why       string // how MaxMemory was chosen, e.g. "default: half of MemTotal 1.9 GiB"
}

// DefaultBudget is half of the machine's MemTotal, and never above a
// finite RLIMIT_MEMLOCK (unless the process has CAP_IPC_LOCK); DefaultMaxQPs.
func DefaultBudget() Budget {
	var memlock uint64 = unix.RLIM_INFINITY
	if r, err := hostenv.MemlockLimit(); err == nil && !memlockIgnored() {
		memlock = r.Cur
	}
	return defaultBudget(ReadMeminfo().MemTotal, memlock)
}

// memlockIgnored reports whether registrations ignore RLIMIT_MEMLOCK
// (CAP_IPC_LOCK, or no limit).
func memlockIgnored() bool { return verbs.CheckMemlock(1<<62) == nil }

func defaultBudget(memTotal int64, memlock uint64) Budget {
	b := Budget{MaxMemory: memTotal / 2, MaxQPs: spec.DefaultMaxQPs, Why: "default: half of MemTotal " + FormatBytes(memTotal)}
	if memTotal <= 0 {
		b.MaxMemory, b.Why = unknownMemTotal, "default: MemTotal unknown"
	}
	if memlock != unix.RLIM_INFINITY && int64(memlock) < b.MaxMemory {
		b.MaxMemory, b.Why = int64(memlock), "default: RLIMIT_MEMLOCK "+FormatBytes(int64(memlock))
	}
	return b
}

// withDefaults fills MaxMemory and MaxQPs where they are 0.
func (b Budget) withDefaults() Budget {
	d := Budget{}
	if b.MaxMemory == 0 || b.MaxQPs == 0 {
		d = DefaultBudget()
	}
	if b.MaxMemory == 0 {
		b.MaxMemory, b.Why = d.MaxMemory, d.Why
	}
	if b.MaxQPs == 0 {
		b.MaxQPs = spec.DefaultMaxQPs
	}
	return b
}

// String is the budget as the server's start log shows it.
func (b Budget) String() string {
	b = b.withDefaults()
	why := ""
	if b.Why != "" {
		why = " (" + b.Why + ")"
	}
	return fmt.Sprintf("--max-memory %s%s, --max-qps %d", FormatBytes(b.MaxMemory), why, b.MaxQPs)
}

// BudgetError is a test refused for its budget: what it needs, where
// (Side: "on the server", "on the client", "in this process ..."), and the
// limit it passes.
type BudgetError struct {
	Test  string // e.g. "write bw 16 QPs x 256 MiB"
	Side  string
	Need  Need
	Limit string // the limit passed, with its figures
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%s needs %s %s; %s", e.Test, e.what(), e.Side, e.Limit)
}

func (e *BudgetError) what() string {
	if strings.Contains(e.Limit, "--max-qps") {
		return fmt.Sprintf("%d QPs", e.Need.QPs)
	}
	return fmt.Sprintf("%s of memory (%s registered, %s other buffers)", FormatBytes(e.Need.Memory()),
		FormatBytes(e.Need.Registered), FormatBytes(e.Need.Unregister+e.Need.Engine))
}

// Unwrap returns ErrOverBudget.
func (e *BudgetError) Unwrap() error { return ErrOverBudget }

// IsOverBudget reports whether err is a refusal over a budget: this
// side's (*BudgetError) or the server's (a RemoteError with CodeBudget).
func IsOverBudget(err error) bool {
	var re *proto.RemoteError
	return errors.Is(err, ErrOverBudget) || (errors.As(err, &re) && re.Code == CodeBudget)
}

// Describe names a test with its QPs and sizes, e.g. "write bw 16 QPs x
// 256 MiB" or "send lat 1 QP x 2 B + 8 load QPs x 64 KiB".
func Describe(s spec.Spec) string {
	d := fmt.Sprintf("%s %s %d QP", s.Op, s.Mode, s.NumQPs())
	if s.Transport == result.TransportTCP {
		d = fmt.Sprintf("tcp %s %s 1 connection", s.Op, s.Mode)
	} else if s.NumQPs() > 1 {
		d += "s"
	}
	d += " x " + FormatBytes(int64(s.Size))
	if s.Load != nil {
		d += fmt.Sprintf(" + %d load QPs x %s", s.Load.QPs, FormatBytes(int64(s.Load.Size)))
	}
	d += s.WorkloadLabel()
	return d
}

// checkNeed holds need n against budget b when inUse bytes and qps are
// taken already and avail bytes are available (MemAvailable; < 0:
// unknown). flag names the budget's flag ("its --max-memory" on a
// server's refusal, "--max-memory" on this side's).
func checkNeed(test, side, flag string, n Need, b Budget, inUse int64, qps int, avail int64) error {
	b = b.withDefaults()
	fail := func(limit string) error { return &BudgetError{Test: test, Side: side, Need: n, Limit: limit} }
	why := ""
	if b.Why != "" {
		why = " (" + b.Why + ")"
	}
	switch {
	case n.QPs+qps > b.MaxQPs:
		l := fmt.Sprintf("%s-qps is %d", flag, b.MaxQPs)
		if qps > 0 {
			l += fmt.Sprintf(", %d of them in use", qps)
		}
		return fail(l)
	case n.Memory()+inUse > b.MaxMemory:
		l := fmt.Sprintf("%s-memory is %s%s", flag, FormatBytes(b.MaxMemory), why)
		if inUse > 0 {
			l += fmt.Sprintf(", %s of it in use", FormatBytes(inUse))
		}
		return fail(l + available(avail))
	case avail >= 0 && n.Memory() > avail:
		return fail("only " + FormatBytes(avail) + " is available (MemAvailable in /proc/meminfo)")
	}
	if err := verbs.CheckMemlock(uint64(n.Registered)); err != nil {
		return fail(err.Error())
	}
	return nil
}

// available says what the machine has: MemAvailable (avail, < 0:
// unknown) and a finite RLIMIT_MEMLOCK.
func available(avail int64) string {
	var parts []string
	if avail >= 0 {
		parts = append(parts, "MemAvailable "+FormatBytes(avail))
	}
	if r, err := hostenv.MemlockLimit(); err == nil && r.Cur != unix.RLIM_INFINITY && !memlockIgnored() {
		parts = append(parts, "RLIMIT_MEMLOCK "+FormatBytes(int64(r.Cur)))
	} else if err == nil {
		parts = append(parts, "RLIMIT_MEMLOCK unlimited")
	}
	if len(parts) == 0 {
		return ""
	}
	return "; this machine has " + strings.Join(parts, ", ")
}

// Ledger counts the memory and QPs of a server's tests in progress
// against its budget.
type Ledger struct {
	mu  sync.Mutex
	b   Budget
	mem int64
	qps int
}

// NewLedger is a ledger of b (its zero fields: the defaults).
func NewLedger(b Budget) *Ledger { return &Ledger{b: b.withDefaults()} }

// Reserve takes n for a test, or refuses it; release gives it back.
func (l *Ledger) Reserve(test string, n Need) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := checkNeed(test, "on the server", "its --max", n, l.b, l.mem, l.qps, ReadMeminfo().MemAvailable); err != nil {
		return nil, err
	}
	l.mem += n.Memory()
	l.qps += n.QPs
	return sync.OnceFunc(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.mem -= n.Memory()
		l.qps -= n.QPs
	}), nil
}

// CheckBudget holds every spec of a run against this process's budget
// before anything is mapped: the client's side, and with loopback the
// server's too (both sides live in this process). Tests run one at a
// time, so each is held alone.
func CheckBudget(specs []spec.Spec, b Budget, loopback bool) error {
	side, avail := "on the client", ReadMeminfo().MemAvailable
	if loopback {
		side = "in this process (client and server)"
	}
	for _, s := range specs {
		n := NeedOf(s, true)
		if loopback {
			n = n.Add(NeedOf(s, false))
		}
		if err := checkNeed(Describe(s), side, "--max", n, b, 0, 0, avail); err != nil {
			return err
		}
	}
	return nil
}

// ParseMemory parses a memory size: bytes with an optional K, M, G or T
// suffix (binary), e.g. 512M or 8G; 1..MaxBudgetMemory.
func ParseMemory(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "B"), "i")
	mult := int64(1)
	if n := len(t); n > 0 {
		if i := strings.IndexByte("kmgtKMGT", t[n-1]); i >= 0 {
			mult, t = int64(1)<<(10*(i%4+1)), t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 1 || v > MaxBudgetMemory/mult {
		return 0, fmt.Errorf("memory size %q: want 1..%d bytes (1P), e.g. 512M or 8G", s, MaxBudgetMemory)
	}
	return v * mult, nil
}

// FormatBytes formats bytes in binary units, e.g. "512 MiB", "8 GiB", "1.5 GiB",
// "4 KiB", "2 B".
func FormatBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, u := float64(b), 0
	for v >= unit && u < 4 {
		v, u = v/unit, u+1
	}
	name := []string{"B", "KiB", "MiB", "GiB", "TiB"}[u]
	if v != float64(int64(v)) {
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + name
	}
	return fmt.Sprintf("%d %s", int64(v), name)
}
