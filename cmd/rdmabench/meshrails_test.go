package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestMeshRailsUsage: the rail flags' conflicts are usage errors, found
// before the launcher is looked for.
func TestMeshRailsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mesh", "--rails", "-d", "rxe0"}, "not with -d or --device-map"},
		{[]string{"mesh", "--rail-devices", "rxe2,rxe3", "--device-map", "rxe0"}, "not with -d or --device-map"},
		{[]string{"mesh", "--rails-parallel"}, "--rails-parallel needs --rails or --rail-devices"},
		{[]string{"mesh", "--rails", "--json", "-"}, "one document per rail"},
		{[]string{"mesh", "--rail-devices", "rxe2,,rxe3"}, "an empty device name"},
	} {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%q: exit %d (want %d), stderr lacks %q:\n%s", c.args, code, exitUsage, c.want, errOut.String())
		}
	}
}
