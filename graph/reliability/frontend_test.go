package reliability_test

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// replayingFrontEnd is a front end on loopback between the facade and the
// REST service, as a proxy in front of a real API: it forwards each request
// of a facade connection over a connection of its own to the service and
// the answer back, and, when told (replay), sends the last answer of every
// idle facade connection again, unsolicited.
type replayingFrontEnd struct {
	t        *testing.T
	url      string
	upstream string // host:port of the REST service

	mu    sync.Mutex
	conns []*frontConn
}

// frontConn is one facade connection of the front end.
type frontConn struct {
	c    net.Conn
	gone chan struct{} // closed when the facade has closed it

	mu   sync.Mutex
	busy bool   // a request is being answered
	last []byte // the last answer, as sent
}

func newReplayingFrontEnd(t *testing.T, upstreamURL string) *replayingFrontEnd {
	t.Helper()
	u, err := url.Parse(upstreamURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &replayingFrontEnd{t: t, url: "http://" + ln.Addr().String() + u.Path, upstream: u.Host}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		for _, fc := range f.conns {
			fc.c.Close()
		}
		f.mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fc := &frontConn{c: c, gone: make(chan struct{})}
			f.mu.Lock()
			f.conns = append(f.conns, fc)
			f.mu.Unlock()
			wg.Go(func() { f.serve(fc) })
		}
	})
	return f
}

// serve forwards fc's requests in order until the facade closes it.
func (f *replayingFrontEnd) serve(fc *frontConn) {
	defer close(fc.gone)
	defer fc.c.Close()
	up, err := net.Dial("tcp", f.upstream)
	if err != nil {
		f.t.Errorf("front end: %v", err)
		return
	}
	defer up.Close()
	br, ubr := bufio.NewReader(fc.c), bufio.NewReader(up)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		fc.mu.Lock()
		fc.busy = true
		fc.mu.Unlock()
		if err := req.Write(up); err != nil {
			return
		}
		resp, err := http.ReadResponse(ubr, req)
		if err != nil {
			return
		}
		var answer bytes.Buffer
		err = resp.Write(&answer)
		resp.Body.Close()
		if err != nil {
			return
		}
		fc.mu.Lock()
		fc.busy, fc.last = false, answer.Bytes()
		fc.mu.Unlock()
		if _, err := fc.c.Write(answer.Bytes()); err != nil {
			return
		}
	}
}

// replay sends the last answer of every idle facade connection again, and
// waits for the facade to close each of them, as a client must when bytes
// arrive on a connection with no request outstanding. It fails t (and
// returns) when the facade keeps one, so that the test goes on to show what
// reusing it does; the bound only stops a test that would hang.
func (f *replayingFrontEnd) replay() {
	f.t.Helper()
	f.mu.Lock()
	conns := append([]*frontConn(nil), f.conns...)
	f.mu.Unlock()
	var sent []*frontConn
	for _, fc := range conns {
		fc.mu.Lock()
		if !fc.busy && fc.last != nil {
			if _, err := fc.c.Write(fc.last); err == nil {
				sent = append(sent, fc)
			}
		}
		fc.mu.Unlock()
	}
	if len(sent) == 0 {
		f.t.Fatal("no idle facade connection to replay an answer on")
	}
	for _, fc := range sent {
		select {
		case <-fc.gone:
		case <-time.After(10 * time.Second):
			f.t.Error("the facade kept an idle upstream connection on which an unsolicited answer arrived")
		}
	}
}

// TestUnsolicitedAnswerNeverReachesAnotherTenant: a front end in front of
// the REST service sends tenant A's resource again, unsolicited, on the
// facade's idle upstream connection. Tenant B then asks for its own
// resource, twice (the response cache on): both answers are B's resource,
// never A's, and the upstream served one GET per tenant.
func TestUnsolicitedAnswerNeverReachesAnotherTenant(t *testing.T) {
	noLeaks(t)
	env := testenv.New(t, testenv.Options{})
	front := newReplayingFrontEnd(t, env.UpstreamURL)
	cfg := stack.DefaultConfig()
	cfg.Upstream = front.url
	cfg.Budget, cfg.UpstreamTrace = budget.Config{}, "off"
	cfg.CacheTTL = "resources=30s"
	_, base := testenv.Serve(t, cfg, nil)
	facade := &gqlclient.Client{URL: base + "/graphql", HTTP: &http.Client{}}

	a, b := env.Bearer(), env.Other(t)
	resA, resB := env.ID(t, "resource", 0), env.Manifest.OtherNetworks[0].IDs["resource"][0]
	const query = `query($id: ID!) { resource(id: $id) { id title } }`
	ask := func(who string, c testenv.Creds, id string) string {
		t.Helper()
		r, err := facade.Post(t.Context(), gqlclient.Request{Query: query, Variables: map[string]any{"id": id}}, c.Header())
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		var data struct {
			Resource *struct{ ID, Title string }
		}
		testenv.MustData(t, r, &data)
		if data.Resource == nil {
			t.Fatalf("%s: no resource in %s", who, r.Raw)
		}
		if data.Resource.ID != id {
			t.Errorf("%s asked for resource %s and received resource %s (%q)", who, id, data.Resource.ID, data.Resource.Title)
		}
		return data.Resource.Title
	}
	titleA := ask("A", a, resA)
	front.replay()
	if titleB := ask("B", b, resB); titleB == titleA {
		t.Errorf("B received A's resource title %q", titleA)
	}
	ask("B again (cached)", b, resB)

	calls, _ := env.Calls()
	if n := calls[restclient.OpGetResource.Pattern()]; n != 2 {
		t.Errorf("the upstream served %d resource GETs, want 2 (one per tenant):\n%s", n, testenv.FormatCalls(calls))
	}
}
