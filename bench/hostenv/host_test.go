package hostenv

import (
	"strings"
	"testing"
)

func TestEnvParseCPUModel(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n" +
			"model name\t: AMD EPYC 7763 64-Core Processor\ncpu MHz\t\t: 2445.404\n\n" +
			"processor\t: 1\nmodel name\t: AMD EPYC 7763 64-Core Processor\n", "AMD EPYC 7763 64-Core Processor"},
		{"arm64 ids only", "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n" +
			"CPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n", "CPU implementer 0x41 part 0xd0c"},
		{"arm64 model name", "processor\t: 0\nmodel name\t: ARMv8 Processor rev 1 (v8l)\nCPU implementer\t: 0x41\n", "ARMv8 Processor rev 1 (v8l)"},
		{"ppc64le", "processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\nclock\t\t: 2166.000000MHz\n", "POWER9 (architected), altivec supported"},
		{"old arm", "Processor\t: ARMv7 Processor rev 4 (v7l)\nHardware\t: BCM2835\n", "ARMv7 Processor rev 4 (v7l)"},
		{"empty model", "model name\t:\nHardware\t: X\n", "X"},
		{"nothing", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseCPUModel(strings.NewReader(tc.in)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEnvLibibverbsVersion(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"rdma-core 44", "libibverbs.so.1.14.44.0", "44.0"},
		{"rdma-core 50", "libibverbs.so.1.14.50.0", "50.0"},
		{"old rdma-core", "libibverbs.so.1.5.22.4", "22.4"},
		{"three parts", "libibverbs.so.1.14.39.1.1", "39.1.1"},
		{"soname", "libibverbs.so.1", ""},
		{"dev link", "libibverbs.so", ""},
		{"static", "libibverbs.a", ""},
		{"provider", "libmlx5.so.1.24.44.0", ""},
		{"abi only", "libibverbs.so.1.14", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := libibverbsVersion(tc.file); got != tc.want {
				t.Errorf("libibverbsVersion(%q) = %q, want %q", tc.file, got, tc.want)
			}
		})
	}
}

func TestEnvDpkgVersions(t *testing.T) {
	for _, tc := range []struct {
		name, out, want string
	}{
		{"both", "libibverbs1:amd64 44.0-2\nrdma-core 44.0-2\n", "44.0-2"},
		{"library only", "libibverbs1 50.0-2ubuntu0.2\nrdma-core \n", "50.0-2ubuntu0.2"},
		{"rdma-core only", "libibverbs1 \nrdma-core 39.0-1\n", "39.0-1"},
		{"none", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseDpkgVersions(tc.out); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEnvHost(t *testing.T) {
	if k := kernel(); k == "" {
		t.Error("kernel: empty")
	}
	t.Logf("kernel %q, rdma-core %q, cpu %q", kernel(), rdmaCoreVersion(), cpuModel())
}
