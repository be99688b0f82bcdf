package result

import (
	"encoding/json"
	"fmt"
)

// readKind decodes data into a new T whose kind (read by kindOf) must be
// kind; what names the document in errors ("cliffs document").
func readKind[T any](data []byte, kind, what string, kindOf func(*T) string) (*T, error) {
	d := new(T)
	if err := json.Unmarshal(data, d); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if k := kindOf(d); k != kind {
		return nil, fmt.Errorf("not a%s %s (kind %q)", article(what), what, k)
	}
	return d, nil
}

// article is " n" before a vowel, else "".
func article(s string) string {
	if s != "" && (s[0] == 'a' || s[0] == 'e' || s[0] == 'i' || s[0] == 'o' || s[0] == 'u') {
		return "n"
	}
	return ""
}
