package restclient_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// gateClient is a client of the local service at url with the gate g, no
// retries and no fixed credentials.
func gateClient(t *testing.T, url string, g restclient.AuthGate) *restclient.Client {
	t.Helper()
	c, err := restclient.NewClient(url, restclient.WithAuthGate(g), restclient.WithRetry(restclient.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func as(auth, network string) context.Context {
	return restclient.WithCredentials(context.Background(), restclient.Credentials{Authorization: auth, NetworkID: network})
}

// TestGateTablesAreBounded: with room for 3 refused credentials, the 4th
// and 5th evict the oldest: the last three stay refused unsent, the first
// is asked again.
func TestGateTablesAreBounded(t *testing.T) {
	srv, url, m := demoService(t)
	g := restclient.DefaultAuthGate()
	g.MaxEntries = 3
	c := gateClient(t, url, g)
	const id = "00000000-0000-4000-8000-000000000001"
	get := func(i int) error {
		_, _, err := c.Resources.GetResource(as("Bearer garbage-"+strconv.Itoa(i), m.NetworkID), id)
		return err
	}
	srv.Hooks().Reset()
	for i := range 5 {
		if err := get(i); !restclient.IsUnauthorized(err) {
			t.Fatalf("token %d: %v, want 401", i, err)
		}
	}
	for _, i := range []int{4, 3, 2} {
		err := get(i)
		var refused *restclient.RefusedCredentialsError
		if !restclient.IsUnauthorized(err) || !asRefused(err, &refused) {
			t.Fatalf("token %d again: %v, want a RefusedCredentialsError", i, err)
		}
	}
	if n := srv.Hooks().Total(); n != 5 {
		t.Fatalf("%d calls, want 5 (the last three remembered)", n)
	}
	if err := get(0); !restclient.IsUnauthorized(err) {
		t.Fatal(err)
	}
	if n := srv.Hooks().Total(); n != 6 {
		t.Fatalf("%d calls, want 6 (the first token was forgotten, so asked again)", n)
	}
}

func asRefused(err error, target **restclient.RefusedCredentialsError) bool {
	e, ok := err.(*restclient.RefusedCredentialsError)
	*target = e
	return ok
}

// TestBearerOnlyRefusalIsNotTheCredentials: the service answers Basic
// credentials 401 on an operation that accepts Bearer only; that refuses the
// operation, not the credentials, whose other calls still go and succeed.
func TestBearerOnlyRefusalIsNotTheCredentials(t *testing.T) {
	srv, url, m := demoService(t)
	c := gateClient(t, url, restclient.DefaultAuthGate())
	ctx := as(m.BasicAuth, m.NetworkID)
	srv.Hooks().Reset()
	for range 2 {
		if _, _, err := c.Visitors.CreateVisit(ctx, &restclient.VisitCreateRequest{}); !restclient.IsUnauthorized(err) {
			t.Fatalf("CreateVisit with Basic: %v, want the service's 401", err)
		}
	}
	if _, _, err := c.Resources.GetResource(ctx, m.IDs["resource"][0]); err != nil {
		t.Fatalf("GetResource with the same Basic credentials: %v", err)
	}
	if n := srv.Hooks().Total(); n != 3 {
		t.Errorf("%d calls, want 3", n)
	}
}

// TestGateOneCredentialManySpellings: the gate keys by the normalised
// credentials: a Basic credential refused in one spelling is refused,
// unsent, in the others (scheme case, blanks).
func TestGateOneCredentialManySpellings(t *testing.T) {
	srv, url, m := demoService(t)
	c := gateClient(t, url, restclient.DefaultAuthGate())
	id := m.IDs["resource"][0]
	basic := base64.StdEncoding.EncodeToString([]byte("client-unknown:wrong?secret>"))
	srv.Hooks().Reset()
	for _, auth := range []string{"Basic " + basic, "basic  " + basic + " ", "BASIC\t" + basic} {
		if _, _, err := c.Resources.GetResource(as(auth, strings.ToUpper(m.NetworkID)), id); !restclient.IsUnauthorized(err) {
			t.Fatalf("%q: %v, want 401", auth, err)
		}
	}
	if n := srv.Hooks().Total(); n != 1 {
		t.Errorf("%d calls, want 1 (one credential, three spellings)", n)
	}
}

// slowFirst is an upstream on loopback whose first request is held until
// release is closed (or the client gives up), then answered with status;
// the others are answered status at once. requests counts them all.
func slowFirst(t *testing.T, status int) (url string, arrived chan struct{}, release chan struct{}, requests *atomic.Int64) {
	t.Helper()
	arrived, release, requests = make(chan struct{}), make(chan struct{}), new(atomic.Int64)
	var once sync.Once
	mux := http.NewServeMux()
	mux.HandleFunc(restclient.OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		first := false
		once.Do(func() { first = true; close(arrived) })
		if first {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			w.Write([]byte(`{"message":"invalid token","type":"unauthorized"}`))
			return
		}
		w.Write([]byte(`{"resource":{"id":"` + r.PathValue("id") + `"}}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, arrived, release, requests
}

// TestUnprovenCallsNeverGoBesideTheProbe: while the first call of an
// unknown token waits for its (slow) 401, the token's other calls are not
// sent: with ProbeWait they fail unsent with ErrProbeUnanswered once it has
// passed, without it when their context ends, and once the 401 comes the
// ones still waiting fail with it. The upstream gets one call in all.
func TestUnprovenCallsNeverGoBesideTheProbe(t *testing.T) {
	const net = "fc37738e-179d-443d-bd55-efaaaae9e4ec"
	for _, wait := range []time.Duration{50 * time.Millisecond, 0} {
		url, arrived, release, requests := slowFirst(t, http.StatusUnauthorized)
		g := restclient.DefaultAuthGate()
		g.ProbeWait = wait
		c := gateClient(t, url, g)
		first := make(chan error, 1)
		go func() { _, _, err := c.Resources.GetResource(as("Bearer garbage", net), "first"); first <- err }()
		<-arrived
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Go(func() {
				ctx := as("Bearer garbage", net)
				if wait == 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
					defer cancel()
				}
				_, _, err := c.Resources.GetResource(ctx, "other-"+strconv.Itoa(i))
				if !errors.Is(err, context.DeadlineExceeded) || wait > 0 && !errors.Is(err, restclient.ErrProbeUnanswered) {
					t.Errorf("ProbeWait %v: a call beside the unanswered probe: %v", wait, err)
				}
			})
		}
		wg.Wait()
		if n := requests.Load(); n != 1 {
			t.Errorf("ProbeWait %v: the upstream got %d calls while the probe was unanswered, want 1", wait, n)
		}
		// A call waiting when the 401 comes fails with it, unsent.
		last := make(chan error, 1)
		go func() { _, _, err := c.Resources.GetResource(as("Bearer garbage", net), "last"); last <- err }()
		close(release)
		if err := <-first; !restclient.IsUnauthorized(err) {
			t.Fatalf("the probe: %v", err)
		}
		if err := <-last; !restclient.IsUnauthorized(err) {
			t.Errorf("the last call: %v", err)
		}
		if n := requests.Load(); n != 1 {
			t.Errorf("ProbeWait %v: the upstream got %d calls, want 1", wait, n)
		}
	}
}

// TestAbandonedProbe: the caller of an unproven credential's first call
// leaves before its answer: a waiting call is not failed for it, and gets
// its own answer.
func TestAbandonedProbe(t *testing.T) {
	url, arrived, release, _ := slowFirst(t, http.StatusOK)
	defer close(release)
	g := restclient.DefaultAuthGate()
	g.ProbeWait = 0 // wait as long as the probe takes
	c := gateClient(t, url, g)
	ctx, cancel := context.WithCancel(as("Bearer tok", "fc37738e-179d-443d-bd55-efaaaae9e4ec"))
	firstDone := make(chan error, 1)
	go func() { _, _, err := c.Resources.GetResource(ctx, "first"); firstDone <- err }()
	<-arrived
	second := make(chan error, 1)
	go func() {
		_, _, err := c.Resources.GetResource(as("Bearer tok", "fc37738e-179d-443d-bd55-efaaaae9e4ec"), "second")
		second <- err
	}()
	cancel()
	if err := <-firstDone; err != context.Canceled {
		t.Fatalf("the abandoned call: %v", err)
	}
	select {
	case err := <-second:
		if err != nil {
			t.Fatalf("the waiting call: %v", err)
		}
	case <-time.After(30 * time.Second): // a hang guard only
		t.Fatal("the waiting call never went")
	}
}
