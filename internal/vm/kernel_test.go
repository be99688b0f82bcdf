package vm

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseShowDepends(t *testing.T) {
	out := `insmod /k/lib/modules/6.1/kernel/net/9p/9pnet.ko 
insmod /k/lib/modules/6.1/kernel/fs/netfs/netfs.ko 
builtin crc32c
insmod /k/lib/modules/6.1/kernel/net/9p/9pnet.ko 
insmod /k/lib/modules/6.1/kernel/fs/9p/9p.ko opt=1
softdep nonsense
`
	got := ParseShowDepends(strings.NewReader(out))
	want := []string{"/k/lib/modules/6.1/kernel/net/9p/9pnet.ko", "/k/lib/modules/6.1/kernel/fs/netfs/netfs.ko", "/k/lib/modules/6.1/kernel/fs/9p/9p.ko"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
