package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/proto"
)

// TestBudgetRefusal: the server's budget refusal is sent as a RemoteError
// with CodeBudget, which IsOverBudget tells from other remote errors.
func TestBudgetRefusal(t *testing.T) {
	r := refusal{&endpoint.BudgetError{Test: "t", Side: "on the server", Limit: "its --max-qps is 1"}}
	var re *proto.RemoteError
	if !errors.As(r, &re) || re.Code != endpoint.CodeBudget || re.Msg != r.Error() || !strings.HasPrefix(r.Error(), "refused: t needs") || !endpoint.IsOverBudget(r) {
		t.Errorf("refusal %v becomes %+v", r, re)
	}
	if !endpoint.IsOverBudget(&proto.RemoteError{Msg: "refused", Code: endpoint.CodeBudget}) || endpoint.IsOverBudget(&proto.RemoteError{Msg: "busy", Code: admit.CodeBusy}) {
		t.Error("IsOverBudget does not tell a server's budget refusal from other remote errors")
	}
}
