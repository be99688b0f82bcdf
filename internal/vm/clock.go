package vm

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/proto"
)

// A guest's clock is the TSC under the rate its kernel calibrated at boot
// (tsc=reliable: no watchdog corrects it). A guest booted beside busy ones
// can calibrate it wrong: in one pair bed g2's clock ran about 70 times the
// host's (uptime 4676 s against g1's 65 s), its server dropped every client
// within a second for "missing" heartbeats, and in a CI run a guest whose
// clock ran slow let the client's heartbeat deadline pass. CheckClocks
// finds such a guest before any test runs on it.

// ClockTolerance is how far a guest's clock rate may be from the host's
// (a fraction) before the bed is booted again.
const ClockTolerance = 0.2

// clockWindow is the host time CheckClocks measures over; a guest found off
// is measured again over clockRecheck before it is blamed (an agent round
// trip of a busy guest blurs a short window).
var clockWindow, clockRecheck = 500 * time.Millisecond, 2 * time.Second

// CheckClocks measures each guest's clock rate against the host's and
// returns a *GuestError naming a guest whose rate is off by more than
// ClockTolerance.
func (b *Bed) CheckClocks(ctx context.Context) error {
	rates, err := b.clockRates(ctx, clockWindow)
	if err != nil {
		return err
	}
	if clockOff(rates) == "" {
		return nil
	}
	if rates, err = b.clockRates(ctx, clockRecheck); err != nil {
		return err
	}
	if g := clockOff(rates); g != "" {
		return &GuestError{fmt.Sprintf("%s: its clock runs %.2f times the host's (its TSC rate was calibrated wrong at boot): every deadline in it would be off", g, rates[g])}
	}
	return nil
}

// clockOff names the first guest (in name order) whose rate is off by more
// than ClockTolerance; "" if none.
func clockOff(rates map[string]float64) string {
	off := ""
	for g, r := range rates {
		if math.Abs(r-1) > ClockTolerance && (off == "" || g < off) {
			off = g
		}
	}
	return off
}

// clockRates is each guest's uptime advance over window divided by the
// host's: both ends read through the agent, the host's times taken at the
// middle of each round trip.
func (b *Bed) clockRates(ctx context.Context, window time.Duration) (map[string]float64, error) {
	type mark struct {
		up   float64
		host time.Time
	}
	read := func() (map[string]mark, error) {
		m := map[string]mark{}
		for _, g := range b.Guests {
			up, at, err := g.uptime(ctx)
			if err != nil {
				return nil, err
			}
			m[g.Name] = mark{up, at}
		}
		return m, nil
	}
	first, err := read()
	if err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(window):
	}
	second, err := read()
	if err != nil {
		return nil, err
	}
	rates := map[string]float64{}
	for name, a := range first {
		z := second[name]
		rates[name] = clockRate(a.up, z.up, z.host.Sub(a.host))
	}
	return rates, nil
}

// clockRate is the guest's advance (uptime seconds from up0 to up1) over
// the host's (hostDur).
func clockRate(up0, up1 float64, hostDur time.Duration) float64 {
	if hostDur <= 0 {
		return math.Inf(1)
	}
	return (up1 - up0) / hostDur.Seconds()
}

// uptime reads the guest's /proc/uptime (seconds) and the host's time at
// the middle of the round trip.
func (g *Guest) uptime(ctx context.Context) (float64, time.Time, error) {
	var out bytes.Buffer
	t0 := time.Now()
	e, err := g.Run(ctx, proto.Run{Argv: []string{"cat", "/proc/uptime"}}, &out, &out, nil)
	t1 := time.Now()
	if err == nil && e.Code != 0 {
		err = fmt.Errorf("exit %d: %s", e.Code, strings.TrimSpace(out.String()))
	}
	if err != nil {
		return 0, t0, fmt.Errorf("%s: reading its clock: %w", g.Name, err)
	}
	up, err := parseUptime(out.String())
	if err != nil {
		return 0, t0, fmt.Errorf("%s: %w", g.Name, err)
	}
	return up, t0.Add(t1.Sub(t0) / 2), nil
}

// parseUptime reads the first field of /proc/uptime.
func parseUptime(s string) (float64, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/uptime: %q: no field", s)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("/proc/uptime: %q: not a number of seconds", s)
	}
	return v, nil
}
