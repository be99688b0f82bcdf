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

// dpkgSample is a status file as dpkg writes it: other packages, a
// continuation line, a removed package with its config files left.
const dpkgSample = `Package: adduser
Status: install ok installed
Version: 3.134
Description: add and remove users
 and groups: a continuation line
 Version: 9.9

Package: libibverbs1
Status: install ok installed
Architecture: amd64
Version: 44.0-2

Package: rdma-core
Status: install ok installed
Version: 44.0-2
`

// TestEnvDpkgVersions: what dpkg-query -W -f='${Package} ${Version}' would
// print for libibverbs1, else rdma-core, read from the status file.
func TestEnvDpkgVersions(t *testing.T) {
	for _, tc := range []struct {
		name, status, want string
	}{
		{"both", dpkgSample, "44.0-2"},
		{"library only", "Package: libibverbs1\nStatus: install ok installed\nVersion: 50.0-2ubuntu0.2\n", "50.0-2ubuntu0.2"},
		{"rdma-core only", "Package: libibverbs1\nStatus: deinstall ok config-files\nVersion: 38.0-1\n\nPackage: rdma-core\nStatus: install ok installed\nVersion: 39.0-1\n", "39.0-1"},
		{"not installed", "Package: libibverbs1\nStatus: purge ok not-installed\n\n", ""},
		{"version in a description", "Package: libibverbs1\nDescription: x\n Version: 1\n", ""},
		{"stanzas apart", "Package: libibverbs1\nStatus: install ok installed\n\nVersion: 7\n", ""},
		{"crlf-free garbage", "\x00\x01::\n: :\n", ""},
		{"none", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := dpkgVersion(strings.NewReader(tc.status)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzDpkgVersion: any status file bytes give an answer, never a panic, and
// a version only from an installed package's stanza.
func FuzzDpkgVersion(f *testing.F) {
	f.Add(dpkgSample)
	f.Add("Package: libibverbs1\n")
	f.Fuzz(func(t *testing.T, status string) {
		v := dpkgVersion(strings.NewReader(status))
		if v != "" && !strings.Contains(status, v) {
			t.Fatalf("version %q is not in the input", v)
		}
	})
}

func TestEnvHost(t *testing.T) {
	if k := kernel(); k == "" {
		t.Error("kernel: empty")
	}
	t.Logf("kernel %q, rdma-core %q, cpu %q", kernel(), rdmaCoreVersion(), cpuModel())
}
