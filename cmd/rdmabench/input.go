package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/rdmabench/rdmabench/bench/result"
)

// maxInputEnv overrides result.MaxInputBytes, the largest input file
// compare, plot, report and import read (docs/output.md).
const maxInputEnv = "RDMABENCH_MAX_INPUT_BYTES"

// setInputLimit applies $RDMABENCH_MAX_INPUT_BYTES; a value that is not a
// positive byte count is a usage error.
func setInputLimit() error {
	v, ok := os.LookupEnv(maxInputEnv)
	if !ok || v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return usageError{fmt.Errorf("$%s %q: want a positive number of bytes", maxInputEnv, v)}
	}
	result.MaxInputBytes = n
	return nil
}

// inputError is an input file that cannot be read or is not the document
// a command reads (exit exitInput); result's readers return a
// *result.InputError, which exits the same.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }
