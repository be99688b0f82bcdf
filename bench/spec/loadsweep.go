package spec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// MaxSweepPoints bounds the fractions of one sweep.
const MaxSweepPoints = 20

// ParseLoadSweep parses fractions of the peak such as "10%,25%,50%" (or
// "0.1,0.25,0.5") into ascending fractions in (0, 1].
func ParseLoadSweep(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		num, pct := strings.CutSuffix(f, "%")
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err == nil && pct {
			v /= 100
		}
		if err != nil || !(v > 0 && v <= 1) {
			return nil, fmt.Errorf("--load-sweep %q: %q is not a load between 0 and 100%% of the peak, such as 50%%", s, f)
		}
		if len(out) > 0 && v <= out[len(out)-1] {
			return nil, fmt.Errorf("--load-sweep %q: loads must rise (%q after %g%%)", s, f, out[len(out)-1]*100)
		}
		out = append(out, v)
	}
	if len(out) == 0 || len(out) > MaxSweepPoints {
		return nil, fmt.Errorf("--load-sweep %q: want 1..%d loads", s, MaxSweepPoints)
	}
	return out, nil
}

// validateSweep refuses a sweep on a test that is not a latency test with
// load QPs.
func (s Spec) validateSweep() error {
	if len(s.LoadSweep) == 0 {
		return nil
	}
	if s.Mode != result.ModeLat || s.Load == nil || s.Transport == result.TransportTCP {
		return fmt.Errorf("--load-sweep runs RDMA latency tests (--mode lat) with load QPs (--load-qps N); %s has none", s.Name())
	}
	if s.LimitBW > 0 || s.LimitMsgRate > 0 {
		return fmt.Errorf("--load-sweep sets the load's rate itself; drop --limit-bw and --limit-msgrate")
	}
	return nil
}
