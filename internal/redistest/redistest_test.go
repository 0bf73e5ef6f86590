package redistest

import "testing"

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
