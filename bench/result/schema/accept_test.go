package schema_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// acceptDoc is a node acceptance document with a NIC of each verdict.
func acceptDoc() *result.AcceptDocument {
	lo, hi := 94.0, 96.0
	return &result.AcceptDocument{SchemaVersion: result.AcceptSchemaVersion, Kind: result.KindAccept, Tool: "rdmabench", ToolVersion: "0.0.0",
		CommandLine: []string{"rdmabench", "accept"}, Host: "h", Start: time.Unix(1, 0).UTC(), End: time.Unix(2, 0).UTC(),
		Thresholds: result.AcceptThresholds{BW: "90%", LatWriteSend: "p50=2.5us", LatRead: "p50=4.5us", Repeat: 3},
		Confidence: 0.95, Verdict: result.VerdictAcceptFail,
		NICs: []result.AcceptNIC{
			{Device: "mlx5_0", Port: 1, RateGbps: 100, NUMANode: 0, Verdict: result.VerdictAcceptPass,
				Doctor: []result.DoctorFinding{{Check: "port-state", Status: "pass", Detail: "ACTIVE"}},
				Checks: []result.AcceptCheck{{Test: "write bw 64K", Figure: "bw", Bound: "90%", Limit: 90, Value: 95, Low: &lo, High: &hi, Runs: 3, Verdict: "pass"}}},
			{Device: "mlx5_1", Port: 1, RateGbps: 100, NUMANode: 1, Verdict: result.VerdictAcceptFail, Reasons: []string{"doctor mtu: fail"},
				Doctor: []result.DoctorFinding{{Check: "mtu", Status: "fail", Detail: "1024", Fix: "raise it"}}, Checks: []result.AcceptCheck{}},
			{Device: "rxe0", Port: 1, NUMANode: -1, Verdict: result.VerdictAcceptTell, Doctor: []result.DoctorFinding{},
				Checks: []result.AcceptCheck{{Test: "write bw 64K", Figure: "bw", Bound: "90%", Runs: 1, Verdict: "cannot tell", Note: "one run, no interval; use --repeat 5"}}},
		},
		Skipped: []string{"mlx5_2 port 1: PORT_DOWN"}}
}

func TestAcceptDocumentSchema(t *testing.T) {
	b, err := json.Marshal(acceptDoc())
	if err != nil {
		t.Fatal(err)
	}
	if k := schema.KindOf(b); k != result.KindAccept {
		t.Errorf("KindOf = %q", k)
	}
	if err := schema.Validate(b); err != nil {
		t.Errorf("valid document: %v", err)
	}
	if err := acceptDoc().Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	for name, c := range map[string]struct {
		edit func(d *result.AcceptDocument)
		want string
	}{
		"verdict":     {func(d *result.AcceptDocument) { d.Verdict = "maybe" }, "/verdict"},
		"nic verdict": {func(d *result.AcceptDocument) { d.NICs[0].Verdict = "ok" }, "/nics/0/verdict"},
		"figure":      {func(d *result.AcceptDocument) { d.NICs[0].Checks[0].Figure = "mean" }, "/nics/0/checks/0/figure"},
		"no device":   {func(d *result.AcceptDocument) { d.NICs[0].Device = "" }, "/nics/0/device"},
	} {
		d := acceptDoc()
		c.edit(d)
		b, _ := json.Marshal(d)
		if err := schema.Validate(b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a violation at %s", name, err, c.want)
		}
	}
	d := acceptDoc()
	d.Verdict = result.VerdictAcceptPass
	if err := d.Check(); err == nil || !strings.Contains(err.Error(), "worst NIC") {
		t.Errorf("node verdict better than a NIC's: %v", err)
	}
}
