package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// MeshSchemaVersion is the version of the mesh document (mesh.schema.json).
const MeshSchemaVersion = 1

// KindMesh is MeshDocument.Kind, the member that tells a mesh document
// from a result document.
const KindMesh = "mesh"

// Mesh outcomes and statuses.
const (
	MeshComplete = "complete" // every pair measured
	MeshPartial  = "partial"  // some pairs failed or were lost
	StatusOK     = "ok"
	StatusFailed = "failed" // a pair whose tests failed or never ran
	StatusLost   = "lost"   // a rank whose report never reached rank 0
)

// MeshDocument is the JSON document of `rdmabench mesh --json`: one run over
// all ranks of a launcher's job, written by rank 0.
type MeshDocument struct {
	SchemaVersion int       `json:"schema_version"` // MeshSchemaVersion
	Kind          string    `json:"kind"`           // KindMesh
	Tool          string    `json:"tool"`           // "rdmabench"
	ToolVersion   string    `json:"tool_version"`
	CommandLine   []string  `json:"command_line"` // rank 0's os.Args
	Start         time.Time `json:"start_time"`
	End           time.Time `json:"end_time"`
	Launcher      string    `json:"launcher"` // the bootstrap interface, e.g. "pmi-1 (PMI_FD)"
	Pattern       string    `json:"pattern"`  // pairs, ring, all-to-one, bisection
	Root          int       `json:"root"`     // all-to-one's target rank (0 for the others)
	Rounds        int       `json:"rounds"`
	// UnsyncedFrom is the first round that started without a launcher
	// barrier (one timed out: a rank died or hung), -1 when every round
	// was synchronised. From there on tests of different pairs may overlap.
	UnsyncedFrom int        `json:"unsynced_from_round"`
	Outcome      string     `json:"outcome"` // MeshComplete or MeshPartial
	Ranks        []MeshRank `json:"ranks"`
	Pairs        []MeshPair `json:"pairs"`
	// Fairness is, for an all-to-one run, how evenly the senders shared
	// the root in each test (fairness.go); absent for other patterns.
	Fairness []MeshFairness `json:"fairness,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
}

// MeshRank is one rank of the run.
type MeshRank struct {
	Rank      int    `json:"rank"`
	Host      string `json:"host"`
	LocalRank int    `json:"local_rank"`       // index among the ranks on the same host
	Addr      string `json:"address"`          // control address its servers listen on
	Ports     []int  `json:"ports"`            // TCP ports of its servers
	Device    string `json:"device,omitempty"` // from --device-map; "" for by route
	Status    string `json:"status"`           // StatusOK, StatusFailed (some own pair failed) or StatusLost
	Error     string `json:"error,omitempty"`
	// Env is the rank's environment as its first test saw it (as client
	// if it ran one, else as server); nil if it ran no test.
	Env *Env `json:"environment,omitempty"`
}

// MeshPair is one measured pair: every test of the run's list, Client
// against Server's server.
type MeshPair struct {
	Round      int       `json:"round"`
	Client     int       `json:"client"`
	Server     int       `json:"server"`
	ClientHost string    `json:"client_host"`
	ServerHost string    `json:"server_host"`
	Status     string    `json:"status"` // StatusOK or StatusFailed
	Error      string    `json:"error,omitempty"`
	Start      time.Time `json:"start_time"`
	End        time.Time `json:"end_time"`
	// Env and ServerEnv are both ends' environments for this pair (the
	// device each chose by route to the other); nil when the tests never
	// connected.
	Env       *Env     `json:"environment,omitempty"`
	ServerEnv *Env     `json:"server_environment,omitempty"`
	Results   []Result `json:"results"` // with histograms and port counters
	Warnings  []string `json:"warnings,omitempty"`
}

// Name is "host(rank)→host(rank)", the pair's name in reports and gates.
func (p MeshPair) Name() string {
	return fmt.Sprintf("%s(%d)→%s(%d)", p.ClientHost, p.Client, p.ServerHost, p.Server)
}

// Failed counts the pairs not measured.
func (d *MeshDocument) Failed() int {
	n := 0
	for _, p := range d.Pairs {
		if p.Status != StatusOK {
			n++
		}
	}
	return n
}

// AsDocument is pair p as a result document (for compare and plot).
func (d *MeshDocument) AsDocument(p MeshPair) *Document {
	doc := &Document{SchemaVersion: SchemaVersion, Tool: d.Tool, ToolVersion: d.ToolVersion,
		CommandLine: d.CommandLine, Start: p.Start, End: p.End, Role: "client", Peer: p.ServerHost,
		ServerEnv: p.ServerEnv, Results: p.Results, Warnings: p.Warnings}
	if p.Env != nil {
		doc.Env = *p.Env
	}
	return doc
}

// IsMeshDocument reports whether data is a mesh document: a JSON object
// whose "kind" is "mesh".
func IsMeshDocument(data []byte) bool {
	return isKind(data, KindMesh)
}

// WriteMeshJSON writes doc to path ("-": stdout).
func WriteMeshJSON(path string, doc *MeshDocument) error {
	d := *doc
	d.SchemaVersion, d.Kind = MeshSchemaVersion, KindMesh
	if d.Tool == "" {
		d.Tool = "rdmabench"
	}
	if d.CommandLine == nil {
		d.CommandLine = []string{}
	}
	if d.Ranks == nil {
		d.Ranks = []MeshRank{}
	}
	if d.Pairs == nil {
		d.Pairs = []MeshPair{}
	}
	for i := range d.Pairs {
		if d.Pairs[i].Results == nil {
			d.Pairs[i].Results = []Result{}
		}
	}
	for i := range d.Ranks {
		if d.Ranks[i].Ports == nil {
			d.Ranks[i].Ports = []int{}
		}
	}
	return WriteJSON(path, &d)
}

// ReadMeshFile reads a mesh document ("-": stdin); an error is an
// *InputError.
func ReadMeshFile(path string) (*MeshDocument, error) {
	return Open(path).Mesh()
}

// ParseMesh decodes a mesh document read from name; a pair's result with
// a value no measurement produces is a *ValueError (see Document.Check).
func ParseMesh(b []byte, name string) (*MeshDocument, error) {
	if !isKind(b, KindMesh) {
		var err error
		if !json.Valid(b) {
			err = json.Unmarshal(b, new(any))
		}
		return nil, notKind(name, b, KindMesh, err)
	}
	var doc MeshDocument
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: not %s: %w", name, Describe(KindMesh), err)
	}
	if doc.SchemaVersion != MeshSchemaVersion {
		return nil, fmt.Errorf("%s: schema version %d, this rdmabench reads %d", name, doc.SchemaVersion, MeshSchemaVersion)
	}
	if err := doc.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &doc, nil
}
