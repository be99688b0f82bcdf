package vm

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// The priority of the guests' qemu threads on the host: a foreground guest
// favoured (GuestNice), a bed booting ahead of its turn idle until its turn
// comes. What the host allows decides how (Priorities).

// GuestNice is the nice value of the guests' qemu threads where the host
// allows it (CAP_SYS_NICE, or an RLIMIT_NICE that permits it): under TCG the
// guest's two vCPUs share the host's cores with whatever else runs there (the
// go tool building the next test binary), and a vCPU preempted while it holds
// a guest lock stalls the other; the guest then ran 4 times slower (docs'
// RDMA blocks: 20 s against 79 s beside two busy loops) and its tests'
// deadlines passed. Favoured, it yields less.
const GuestNice = -5

// Priorities is what this host lets vmexec do with a thread's priority,
// found once by trying it on a thread of its own (ProbePriorities).
type Priorities struct {
	// Favour: a thread may go to nice GuestNice, below this process's.
	Favour bool
	// Unidle: a thread under SCHED_IDLE may return to SCHED_NORMAL. Without
	// CAP_SYS_NICE Linux allows it only where RLIMIT_NICE would allow the
	// thread's nice (sched(7)); a container's root often has neither, and a
	// bed booted ahead under SCHED_IDLE would then stay there through its
	// turn, starved by any host process (its tests' heartbeats missed).
	Unidle bool
	// Nice is this process's nice value, which qemu's threads inherit.
	Nice int
}

// ProbePriorities is the host's Priorities, probed once per process.
var ProbePriorities = sync.OnceValue(probePriorities)

func probePriorities() Priorities {
	ch := make(chan Priorities)
	go func() {
		// the thread is never unlocked: it ends with the goroutine, and its
		// priorities with it
		runtime.LockOSThread()
		tid := unix.Gettid()
		var p Priorities
		if prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil {
			p.Nice = 20 - prio // the raw system call's 40..1 for nice -20..19
		}
		p.Favour = unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_NORMAL, Nice: GuestNice}, 0) == nil
		if unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_IDLE}, 0) == nil {
			p.Unidle = unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_NORMAL, Nice: int32(p.Nice)}, 0) == nil
		}
		ch <- p
	}()
	return <-ch
}

// Note says what the host withholds and what vmexec does instead; "" when
// it allows both.
func (p Priorities) Note() string {
	switch {
	case !p.Unidle:
		return fmt.Sprintf("priorities: this host lets no thread leave SCHED_IDLE (no CAP_SYS_NICE, and RLIMIT_NICE forbids nice %d): beds booted ahead run under SCHED_BATCH at nice %d, beside the running guest, not idle; guests are not favoured (nice %d refused)",
			p.Nice, p.Nice, GuestNice)
	case !p.Favour:
		return fmt.Sprintf("priorities: nice %d refused (no CAP_SYS_NICE): guests run at nice %d, not favoured over the host's other work", GuestNice, p.Nice)
	}
	return ""
}

// favour puts every thread of process pid under the normal policy at
// GuestNice, or at the process's own nice where the host refuses that.
func favour(pid int) {
	p := ProbePriorities()
	if p.Favour {
		setSched(pid, unix.SCHED_NORMAL, GuestNice)
	} else {
		setSched(pid, unix.SCHED_NORMAL, p.Nice)
	}
}

// idle puts every thread of process pid under SCHED_IDLE, for a bed booting
// ahead of its turn (Options.Background): it runs only on a core that nothing
// else wants, and any waking thread preempts it at once, so that the running
// guest's timed tests do not feel it (at nice 19 they did: an open-loop test
// missed its rate by 60 % while the next guest booted beside it). Where the
// host would not let it leave SCHED_IDLE again (Priorities.Unidle), it goes
// under SCHED_BATCH instead, which favour can undo: it then preempts the
// running guest's threads less, but shares the cores with them.
func idle(pid int) {
	if ProbePriorities().Unidle {
		setSched(pid, unix.SCHED_IDLE, 0)
	} else {
		setSched(pid, unix.SCHED_BATCH, ProbePriorities().Nice)
	}
}

// setSched sets the policy and nice of every thread of process pid, where the
// host allows it.
func setSched(pid, policy, nice int) {
	for _, tid := range threads(pid) {
		unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: uint32(policy), Nice: int32(nice)}, 0)
	}
}

// threads lists the threads of process pid.
func threads(pid int) []int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var tids []int
	for _, t := range ents {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// unfavoured lists the threads of process pid that are not under
// SCHED_NORMAL (after favour: a thread the host did not let it move).
func unfavoured(pid int) []int {
	var bad []int
	for _, tid := range threads(pid) {
		if a, err := unix.SchedGetAttr(tid, 0); err == nil && a.Policy != unix.SCHED_NORMAL {
			bad = append(bad, tid)
		}
	}
	return bad
}
