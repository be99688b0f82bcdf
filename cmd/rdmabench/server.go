package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/server"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// serverLong is the description of 'rdmabench server'.
func serverLong() string {
	return fmt.Sprintf("Answers clients ('rdmabench run'): the client says which tests to run, the server\n"+
		"only how much it allows (--max-memory, --max-qps) and whom it serves (--bind, --allow,\n"+
		"--auth-key-file). One client's tests at a time. A client that sends no heartbeat for\n"+
		"%v during a test (dead, stopped or silent) is dropped and the next client served; every\n"+
		"handshake must be done within %v, at most --max-startups at once (the oldest dropped\n"+
		"for a new one) and --max-startups-per-addr from one address (more refused, with the\n"+
		"reason). SIGINT/SIGTERM abort the running test and exit within 2 s.",
		server.HeartbeatTimeout(), server.HandshakeTimeout())
}

// cmdServer is 'rdmabench server'.
func cmdServer(fs *flag.FlagSet) action {
	var d deviceFlags
	d.add(fs)
	bind := fs.String("bind", "", "address to listen on (default: all addresses, serving loopback clients only unless there is a key: "+
		"protected mode); an explicit --bind serves any client that reaches it")
	port := fs.IntP("port", "p", spec.DefaultPort, "TCP control port")
	cpuList := fs.String("cpu", "", "pin the responder thread to this CPU")
	var nf numaFlags
	nf.add(fs, "the responder threads")
	keyFile := addKeyFlag(fs, "that clients must prove they hold")
	allow := fs.String("allow", "", "admit only clients from these CIDR prefixes or addresses (comma-separated, e.g. 10.0.0.0/8,192.0.2.7); checked at accept")
	idle := fs.Duration("idle-timeout", server.DefaultIdleTimeout, "close a session that sends nothing for this long between tests")
	maxSession := fs.Duration("max-session", 0, "close a session this long after it opened, aborting its test (0: no limit)")
	maxStartups := fs.Int("max-startups", 0, "connections at most between accept and authentication; when full, the oldest is dropped for a new one "+
		"(0: half of what the file-descriptor limit leaves after 32, within 4..1024)")
	perAddr := fs.Int("max-startups-per-addr", admit.DefaultMaxStartupsPerAddr, "connections at most between accept and authentication from one address "+
		"(IPv6: one /64); more are refused with the reason")
	once := fs.Bool("once", false, "serve the first client session that runs a test, then exit: 0 when all its tests passed, 1 when one failed "+
		"(as perftest's server ends after its test; scripts then wait for the server to exit instead of polling)")
	var bud budgetFlags
	bud.add(fs, true)
	perftestServerFlags(fs)
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if err := d.check(fs); err != nil {
			return err
		}
		budget, err := bud.budget()
		if err != nil {
			return err
		}
		numaChoice, err := nf.choice(fs)
		if err != nil {
			return err
		}
		key, err := loadKey(*keyFile, stderr)
		if err != nil {
			return err
		}
		var nets []netip.Prefix
		if fs.Changed("allow") {
			if nets, err = admit.ParseAllow(*allow); err != nil {
				return usageError{fmt.Errorf("--allow %q: %w", *allow, err)}
			}
		}
		for _, f := range []struct {
			name string
			v    time.Duration
			min  time.Duration
		}{{"idle-timeout", *idle, time.Second}, {"max-session", *maxSession, 0}} {
			if f.v < f.min {
				return usageError{fmt.Errorf("--%s %v: must be at least %v", f.name, f.v, f.min)}
			}
		}
		if err := checkStartups(*maxStartups, *perAddr, admit.MaxStartupsLimit()); err != nil {
			return err
		}
		if strings.Contains(d.device, ",") {
			return usageError{fmt.Errorf("server -d %s: a server serves on one device (or, without -d, on the device each client's route reaches)", d.device)}
		}
		var cpus []int
		if *cpuList != "" {
			if cpus, err = spec.ParseCPUs(*cpuList, hostenv.OnlineCPUs()); err != nil {
				return usageError{fmt.Errorf("--cpu: %w", err)}
			}
		}
		if *port < 1 || *port > 65535 {
			return usageError{fmt.Errorf("control port %d out of range 1..65535", *port)}
		}
		lg := log.New(stderr, "rdmabench server: ", log.LstdFlags)
		lg.Printf("budget: %s", budget)
		ctx, stop := serverContext(ctx, lg)
		defer stop()
		return server.ListenAndServe(ctx, net.JoinHostPort(*bind, strconv.Itoa(*port)),
			server.Config{Device: d.device, Port: d.port, GIDIndex: d.gidIndex, Log: lg, CPUs: cpus, Budget: budget,
				AuthKey: key, Exposed: fs.Changed("bind"), Allow: nets, IdleTimeout: *idle, MaxSession: *maxSession, NUMA: numaChoice,
				MaxStartups: *maxStartups, MaxStartupsPerAddr: *perAddr, Once: *once})
	}
}

// checkStartups validates --max-startups (0: automatic; at most limit, what
// the file-descriptor limit allows) and --max-startups-per-addr (at least 1,
// at most the global cap).
func checkStartups(all, perAddr, limit int) error {
	if all < 0 || all > limit {
		return usageError{fmt.Errorf("--max-startups %d: must be 0 (automatic) or 1..%d (half the file-descriptor limit, RLIMIT_NOFILE)", all, limit)}
	}
	if perAddr < 1 {
		return usageError{fmt.Errorf("--max-startups-per-addr %d: must be at least 1", perAddr)}
	}
	if all > 0 && perAddr > all {
		return usageError{fmt.Errorf("--max-startups-per-addr %d: must not exceed --max-startups %d", perAddr, all)}
	}
	return nil
}
