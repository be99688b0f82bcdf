package wire

import "fmt"

// MTUEnum is perftest's (and verbs') enum ibv_mtu for a path MTU in bytes:
// 256 → 1 ... 4096 → 5; 0 for any other size.
func MTUEnum(bytes int) int {
	for e, b := 1, 256; b <= 4096; e, b = e+1, b*2 {
		if b == bytes {
			return e
		}
	}
	return 0
}

// MTUBytes is the inverse of MTUEnum; 0 for an invalid enum.
func MTUBytes(enum int) int {
	if enum < 1 || enum > 5 {
		return 0
	}
	return 128 << enum
}

// MTULen is the size of the MTU field for a peer of version v: 2 bytes
// ("3" and its NUL) from 5.31 on, 4 before (as perftest's check_mtu).
func MTULen(v Version) int {
	if v.AtLeast(ShortMTUVersion) {
		return 2
	}
	return 4
}

// EncodeMTU writes the MTU field (an enum ibv_mtu in decimal ASCII) in n
// bytes.
func EncodeMTU(enum, n int) ([]byte, error) {
	s := fmt.Sprint(enum)
	if MTUBytes(enum) == 0 || len(s) >= n {
		return nil, outOfRange("mtu", "enum %d: want 1 (256) to 5 (4096)", enum)
	}
	b := make([]byte, n)
	copy(b, s)
	return b, nil
}

// ParseMTU reads the peer's MTU field: decimal digits up to a NUL or the
// end; the value must be a valid enum ibv_mtu.
func ParseMTU(b []byte) (int, error) {
	v, digits := 0, 0
	for _, c := range b {
		if c == 0 {
			break
		}
		if c < '0' || c > '9' || digits == 3 {
			return 0, malformed("mtu", "%q is not a decimal MTU enum", b)
		}
		v, digits = v*10+int(c-'0'), digits+1
	}
	if digits == 0 {
		return 0, malformed("mtu", "%q holds no number", b)
	}
	if MTUBytes(v) == 0 {
		return 0, outOfRange("mtu", "enum %d: want 1 (256) to 5 (4096)", v)
	}
	return v, nil
}
