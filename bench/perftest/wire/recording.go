package wire

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
)

// Recording is one real exchange as the drop-in saw it (RDMABENCH_DROPIN_RECORD):
// every swap in order, with what the drop-in sent and what perftest
// sent. testdata/exchanges holds recordings against perftest 6.06, 6.28
// and 6.29 that the replay tests feed back to this package.
type Recording struct {
	Peer    string   `json:"peer"`     // perftest's version, as it announced it
	Tool    string   `json:"tool"`     // e.g. ib_send_lat
	Args    []string `json:"args"`     // the drop-in's options (both ends had the same)
	Client  bool     `json:"client"`   // the drop-in was the client
	Binary  bool     `json:"binary"`   // -R: the binary per-QP records on rdma_cm
	WithGID bool     `json:"with_gid"` // the ASCII records carry a GID
	Test    Test     `json:"test"`     // what the drop-in negotiated (peer >= 6.28)
	Swaps   []Swap   `json:"swaps"`
}

// Swap is one step of a Recording; Sent and Got are hex.
type Swap struct {
	Field string `json:"field"`
	Sent  string `json:"sent"`
	Got   string `json:"got"`
	Err   string `json:"err,omitempty"`
}

// Add appends a swap (a Conn.Trace function).
func (r *Recording) Add(field string, sent, got []byte, err error) {
	s := Swap{Field: field, Sent: hex.EncodeToString(sent), Got: hex.EncodeToString(got)}
	if err != nil {
		s.Err = err.Error()
	}
	r.Swaps = append(r.Swaps, s)
}

// WriteFile writes r as indented JSON.
func (r *Recording) WriteFile(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadRecording reads a Recording written by WriteFile.
func ReadRecording(path string) (*Recording, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Recording
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, s := range r.Swaps {
		if _, err := hex.DecodeString(s.Sent); err != nil {
			return nil, fmt.Errorf("%s: swap %d (%s): sent: %w", path, i, s.Field, err)
		}
		if _, err := hex.DecodeString(s.Got); err != nil {
			return nil, fmt.Errorf("%s: swap %d (%s): got: %w", path, i, s.Field, err)
		}
	}
	return &r, nil
}
