package hostenv

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSortRails: NUMA node first (unknown last), then PCI address, then
// the devices without PCI by name.
func TestSortRails(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []RailKey
		want []string
	}{
		{"soft by name", []RailKey{{"siw1", -1, ""}, {"rxe1", -1, ""}, {"rxe0", -1, ""}}, []string{"rxe0", "rxe1", "siw1"}},
		{"node then pci", []RailKey{
			{"mlx5_3", 1, "0000:d8:00.0"}, {"mlx5_0", 1, "0000:af:00.0"},
			{"mlx5_2", 0, "0000:5e:00.0"}, {"mlx5_1", 0, "0000:3b:00.0"},
		}, []string{"mlx5_1", "mlx5_2", "mlx5_0", "mlx5_3"}},
		{"pci before soft, unknown node last", []RailKey{{"rxe0", -1, ""}, {"mlx5_9", -1, "0000:01:00.0"}, {"rxe1", 0, ""}, {"mlx5_0", 0, "0000:81:00.0"}},
			[]string{"mlx5_0", "rxe1", "mlx5_9", "rxe0"}},
	} {
		keys := slices.Clone(c.in)
		SortRails(keys)
		var got []string
		for _, k := range keys {
			got = append(got, k.Device)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRailOrder reads the keys from a fake sysfs tree.
func TestRailOrder(t *testing.T) {
	root := t.TempDir()
	mk := func(dev, pci, node string) {
		ib := filepath.Join(root, "class", "infiniband", dev)
		if err := os.MkdirAll(ib, 0o755); err != nil {
			t.Fatal(err)
		}
		if pci == "" {
			return
		}
		fn := filepath.Join(root, "devices", "pci0000:00", pci)
		if err := os.MkdirAll(fn, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fn, "numa_node"), []byte(node+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(fn, filepath.Join(ib, "device")); err != nil {
			t.Fatal(err)
		}
	}
	mk("rxe0", "", "")
	mk("mlx5_1", "0000:d8:00.0", "0")
	mk("mlx5_0", "0000:af:00.0", "1")
	mk("mlx5_2", "0000:3b:00.0", "-1")
	got := RailOrder(root, []string{"rxe0", "mlx5_0", "mlx5_1", "mlx5_2"})
	if want := []string{"mlx5_1", "mlx5_0", "mlx5_2", "rxe0"}; !slices.Equal(got, want) {
		t.Errorf("RailOrder = %v, want %v", got, want)
	}
	if k := RailKeyOf(root, "mlx5_0"); k.Node != 1 || k.PCI != "0000:af:00.0" {
		t.Errorf("RailKeyOf(mlx5_0) = %+v", k)
	}
}
