package stack_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/stack"
)

// The admission share and the response write timeout: their defaults, a
// flag and an environment variable reach the GraphQL options, and a
// negative value stops the start naming the flag.
func TestClientShareAndResponseWriteTimeoutFlags(t *testing.T) {
	parse := func(env map[string]string, args ...string) (stack.Config, error) {
		return stack.ParseFlags(append([]string{"-data-dir="}, args...), func(k string) string { return env[k] }, io.Discard)
	}
	c, err := parse(nil)
	if err != nil || c.Graph.ClientCostShare != graph.DefaultClientCostShare || c.Graph.ResponseWriteTimeout != graph.DefaultResponseWriteTimeout {
		t.Fatalf("defaults: %d, %v (%v); want %d, %v", c.Graph.ClientCostShare, c.Graph.ResponseWriteTimeout, err, graph.DefaultClientCostShare, graph.DefaultResponseWriteTimeout)
	}
	c, err = parse(map[string]string{"RESPONSE_WRITE_TIMEOUT": "3s"}, "-client-cost-share=5000")
	if err != nil || c.Graph.ClientCostShare != 5000 || c.Graph.ResponseWriteTimeout != 3*time.Second {
		t.Fatalf("set: %d, %v (%v); want 5000, 3s", c.Graph.ClientCostShare, c.Graph.ResponseWriteTimeout, err)
	}
	for _, arg := range []string{"-client-cost-share=-1", "-response-write-timeout=-1s"} {
		name, _, _ := strings.Cut(arg, "=")
		if _, err := parse(nil, arg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming %s", arg, err, name)
		}
	}
}
