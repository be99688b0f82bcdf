package result

// NewInput is an Input of data as if read from path, for the tests of
// package result_test (FuzzOpen) that need no file.
func NewInput(path string, data []byte) *Input {
	return &Input{Path: path, Kind: KindOf(data), data: data}
}
