package spec

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// ParseSize parses a byte count with an optional K, M or G suffix (binary:
// 4K = 4096).
func ParseSize(s string) (int, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "B"), "i")
	mult := 1
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult, t = 1<<10, t[:n-1]
		case 'm', 'M':
			mult, t = 1<<20, t[:n-1]
		case 'g', 'G':
			mult, t = 1<<30, t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, e.g. 64, 4K, 1M", s)
	}
	if v > MaxSize/int64(mult) {
		return 0, fmt.Errorf("size %q exceeds the limit of %d bytes (1G)", s, MaxSize)
	}
	return int(v) * mult, nil
}

// ParseSizes parses a comma-separated list of sizes and power-of-two ranges:
// "2,64,4K,1M" or "2-8M" (2, 4, 8, ... 8M). Duplicates are removed, order is
// kept.
func ParseSizes(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	add := func(v int) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("size list %q has an empty entry", s)
		}
		if strings.HasPrefix(part, "-") {
			return nil, fmt.Errorf("size %q: want a positive number of bytes, e.g. 64, 4K, 1M", part)
		}
		if lo, hi, ok := strings.Cut(part, "-"); ok {
			a, err := ParseSize(lo)
			if err != nil {
				return nil, err
			}
			b, err := ParseSize(hi)
			if err != nil {
				return nil, err
			}
			if a > b {
				return nil, fmt.Errorf("size range %q: %d is above %d", part, a, b)
			}
			if bits.OnesCount(uint(a)) != 1 {
				return nil, fmt.Errorf("size range %q: start %d is not a power of two", part, a)
			}
			for v := a; v <= b; v *= 2 {
				add(v)
			}
			continue
		}
		v, err := ParseSize(part)
		if err != nil {
			return nil, err
		}
		add(v)
	}
	return out, nil
}

// ParseCPUs parses a CPU list such as "2", "0,2" or "0-3,6" and checks
// each CPU against the count online (n) before expanding a range, so a
// list never grows beyond n entries per part.
func ParseCPUs(s string, n int) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.ParseInt(lo, 10, 64)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.ParseInt(hi, 10, 64)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return nil, fmt.Errorf("CPU list %q: want CPU numbers such as 2, 0,2 or 0-3", s)
		}
		if b >= int64(n) {
			return nil, fmt.Errorf("CPU %d out of range 0..%d (this machine has %d CPUs online)", b, n-1, n)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, int(c))
		}
	}
	return cpus, nil
}

// ParseList parses a comma-separated list whose entries must be in valid.
// "all" stands for every valid entry.
func ParseList(what, s string, valid []string) ([]string, error) {
	if strings.TrimSpace(s) == "all" {
		return append([]string(nil), valid...), nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if !contains(valid, p) {
			return nil, fmt.Errorf("%s %q unknown; valid: %s", what, p, strings.Join(valid, ", "))
		}
		if !contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}
