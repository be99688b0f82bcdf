package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/auth"
)

// The shared key of `server` and `run`, and the server's signal handling.

// addKeyFlag adds --auth-key-file to fs.
func addKeyFlag(fs *flag.FlagSet, role string) *string {
	return fs.String("auth-key-file", "", "shared key "+role+" (file of mode 0600 or stricter, at most 4 KiB; a trailing newline is ignored); "+
		"default: $"+auth.KeyEnv+" if set. The key is proved with HMAC-SHA256 over both sides' nonces and never sent")
}

// loadKey reads the key of --auth-key-file (or $RDMABENCH_AUTH_KEY); a key
// that cannot be used is a usage error.
func loadKey(path string, stderr io.Writer) ([]byte, error) {
	key, warn, err := auth.LoadKey(path)
	if err != nil {
		return nil, usageError{err}
	}
	if warn != "" {
		fmt.Fprintf(stderr, "rdmabench: warning: %s\n", warn)
	}
	return key, nil
}

// serverContext is ctx, also cancelled at SIGINT or SIGTERM, which it logs:
// the server then closes its sessions (aborting a running test) and exits
// within 2 s.
func serverContext(ctx context.Context, lg *log.Logger) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-sigs:
			lg.Printf("%v: aborting any session and exiting", sig)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
}
