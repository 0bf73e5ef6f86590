package redistest

import (
	"strings"
	"testing"
)

func TestStartStopRestart(t *testing.T) {
	s := StartOwn(t)
	c := s.Client()
	if err := c.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if err := c.Get(t.Context(), "k").Err(); err == nil {
		t.Fatal("stopped server answered")
	}
	s.Restart()
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestClusterAndSentinelAnswer(t *testing.T) {
	c := StartCluster(t)
	if len(c.Masters) != 3 || len(c.Nodes) != 6 {
		t.Fatalf("cluster of %d masters, %d nodes", len(c.Masters), len(c.Nodes))
	}
	s := StartSentinel(t)
	for _, sn := range s.Sentinels {
		if v, err := sn.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"); err != nil || !strings.Contains(v, s.Master.Addr()[strings.LastIndex(s.Master.Addr(), ":")+1:]) {
			t.Errorf("sentinel %s: master %s, %v", sn.Addr(), v, err)
		}
	}
}
