package spec

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestDefaultsMatchDoc pins every default in defaults.go to docs/defaults.md:
// each value appears there as `Name=value`, and each such mark names a
// default with that value. A change to either side fails here.
func TestDefaultsMatchDoc(t *testing.T) {
	code := map[string]int{
		"DefaultPort": DefaultPort, "DefaultLatIters": DefaultLatIters, "DefaultBWIters": DefaultBWIters,
		"DefaultLatSize": DefaultLatSize, "DefaultBWSize": DefaultBWSize, "DefaultTxDepth": DefaultTxDepth,
		"DefaultCQMod": DefaultCQMod, "DefaultRxDepth": DefaultRxDepth, "DefaultLatWarmup": DefaultLatWarmup,
		"DefaultLoadTxDepth": DefaultLoadTxDepth, "DefaultLoadSize": DefaultLoadSize, "DefaultQPTimeout": DefaultQPTimeout,
		"DefaultRetryCount": DefaultRetryCount, "DefaultRNRRetry": DefaultRNRRetry, "DefaultRNRTimer": DefaultRNRTimer,
		"DefaultVerifyMessages": DefaultVerifyMessages, "DefaultMaxQPs": DefaultMaxQPs,
		"DefaultCacheLine": DefaultCacheLine, "DefaultSeed": DefaultSeed,
	}
	b, err := os.ReadFile("../../docs/defaults.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]int{}
	for _, m := range regexp.MustCompile("`(Default[A-Za-z]+)=([0-9]+)`").FindAllStringSubmatch(string(b), -1) {
		v, _ := strconv.Atoi(m[2])
		if old, ok := doc[m[1]]; ok && old != v {
			t.Errorf("docs/defaults.md gives %s twice: %d and %d", m[1], old, v)
		}
		doc[m[1]] = v
	}
	for name, v := range code {
		if dv, ok := doc[name]; !ok {
			t.Errorf("docs/defaults.md lacks `%s=%d`", name, v)
		} else if dv != v {
			t.Errorf("%s is %d in bench/spec/defaults.go but %d in docs/defaults.md", name, v, dv)
		}
	}
	for name := range doc {
		if _, ok := code[name]; !ok {
			t.Errorf("docs/defaults.md names %s, which is not a default in bench/spec/defaults.go (or not pinned here)", name)
		}
	}
}

// TestSpecDefaults checks what withDefaults fills for a bare spec of each
// mode, and that explicit values are kept.
func TestSpecDefaults(t *testing.T) {
	lat := Spec{Op: "send", Mode: "lat", Size: 2, Warmup: -1}.forMode(false).WithDefaults()
	if lat.Iters != DefaultLatIters || lat.TxDepth != 1 || lat.CQMod != 1 || lat.RxDepth != DefaultRxDepth ||
		lat.Warmup != DefaultLatWarmup || lat.QPTimeout != DefaultQPTimeout || lat.RetryCount != DefaultRetryCount || lat.RNRRetry != DefaultRNRRetry {
		t.Errorf("latency defaults: %+v", lat)
	}
	bw := Spec{Op: "write", Mode: "bw", Size: 65536, Warmup: -1}.forMode(false).WithDefaults()
	if bw.Iters != DefaultBWIters || bw.TxDepth != DefaultTxDepth || bw.CQMod != 1 || bw.Warmup != DefaultTxDepth {
		t.Errorf("bandwidth defaults (64 KiB: every send signaled): %+v", bw)
	}
	small := Spec{Op: "write", Mode: "bw", Size: 64}.forMode(false).WithDefaults()
	if small.CQMod != DefaultCQMod {
		t.Errorf("64 B bandwidth CQ moderation %d, want %d", small.CQMod, DefaultCQMod)
	}
	loaded := Spec{Op: "send", Mode: "lat", Size: 2, Load: &Load{QPs: 2, Op: "write", Size: DefaultLoadSize}}.forMode(false).WithDefaults()
	if loaded.Load.TxDepth != DefaultLoadTxDepth || loaded.Load.CQMod != 1 {
		t.Errorf("load defaults: %+v", *loaded.Load)
	}
	kept := Spec{Op: "read", Mode: "bw", Size: 64, Iters: 7, TxDepth: 8, CQMod: 2, RxDepth: 9, QPTimeout: 18, RetryCount: 3, RNRRetry: 1}.forMode(false).WithDefaults()
	if kept.Iters != 7 || kept.TxDepth != 8 || kept.CQMod != 2 || kept.RxDepth != 9 || kept.QPTimeout != 18 || kept.RetryCount != 3 || kept.RNRRetry != 1 {
		t.Errorf("explicit values changed: %+v", kept)
	}
}
