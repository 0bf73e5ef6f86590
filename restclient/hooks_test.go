package restclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
)

// trail records the order in which hooks run.
type trail struct {
	mu    sync.Mutex
	steps []string
}

func (tr *trail) add(s string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.steps = append(tr.steps, s)
}

func (tr *trail) hooks(name string, refuse error) CallHooks {
	return CallHooks{
		Before: func(ctx context.Context, cs CallStart) error {
			tr.add(name + ".before " + cs.Method + " " + cs.Route)
			return refuse
		},
		After: func(ctx context.Context, ci CallInfo) {
			if ci.Err != nil {
				tr.add(name + ".after " + ci.Err.Error())
				return
			}
			tr.add(name + ".after " + http.StatusText(ci.Status))
		},
	}
}

func TestCallHooksNestAroundTheCall(t *testing.T) {
	u := newUpstream(t)
	tr := &trail{}
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		tr.add("upstream")
		io.WriteString(w, `{"resource":{"id":"r"}}`)
	})
	want := []string{"outer.before GET /resources/v1/{id}", "inner.before GET /resources/v1/{id}", "upstream", "inner.after OK", "outer.after OK"}
	// Nested calls and one call with several sets (the first outermost)
	// install the same chain.
	for name, ctx := range map[string]context.Context{
		"nested":   WithCallHooks(WithCallHooks(ctxT(t), tr.hooks("outer", nil)), tr.hooks("inner", nil)),
		"variadic": WithCallHooks(ctxT(t), tr.hooks("outer", nil), tr.hooks("inner", nil)),
	} {
		tr.steps = nil
		if _, _, err := u.client().Resources.GetResource(ctx, "r"); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tr.steps, want) {
			t.Errorf("%s: steps %q, want %q", name, tr.steps, want)
		}
	}
}

func TestCallHooksBeforeRefuses(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			u := newUpstream(t) // any request reaching it fails the test
			tr := &trail{}
			refusal := errors.New("cap reached")
			ctx := WithCallHooks(WithCallHooks(WithCallHooks(ctxT(t),
				tr.hooks("outer", nil)), tr.hooks("cap", refusal)), tr.hooks("inner", nil))
			var err error
			if method == "GET" {
				_, _, err = u.client().Resources.GetResource(ctx, "r")
			} else {
				_, _, err = u.client().Visitors.CreateVisitRequest(ctx, &VisitRequestCreateRequest{})
			}
			if err != refusal {
				t.Fatalf("err %v, want Before's error as is", err)
			}
			if u.hits.Load() != 0 {
				t.Errorf("%d upstream requests after a refusal", u.hits.Load())
			}
			// The set outside the refusal admitted the call and sees its end;
			// the refusing set and the one inside it see nothing more.
			route := map[string]string{"GET": OpGetResource.Pattern(), "POST": OpCreateVisitRequest.Pattern()}[method]
			want := []string{"outer.before " + route, "cap.before " + route, "outer.after cap reached"}
			if !slices.Equal(tr.steps, want) {
				t.Errorf("steps %q, want %q", tr.steps, want)
			}
		})
	}
}

func TestCallHooksSeeSharedWaiters(t *testing.T) {
	u := newUpstream(t)
	release := make(chan struct{})
	blockingResource(t, u, release)
	c := u.client()
	obs := &observations{}
	var admitted sync.WaitGroup
	const n = 3
	admitted.Add(n)
	ctx := WithCallHooks(ctxT(t), CallHooks{
		Before: func(context.Context, CallStart) error { admitted.Done(); return nil },
		After:  obs.observe,
	})
	errs := make(chan error, n)
	for range n {
		go func() { _, _, err := c.Resources.GetResource(ctx, "r1"); errs <- err }()
	}
	admitted.Wait()
	if flights := awaitWaiters(t, c, n); flights != 1 {
		t.Fatalf("%d upstream calls, want 1 shared", flights)
	}
	close(release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	shared := 0
	for _, ci := range obs.calls {
		if ci.Shared {
			shared++
		}
	}
	if len(obs.calls) != n || shared != n-1 || u.hits.Load() != 1 {
		t.Errorf("%d calls seen (%d shared), %d upstream requests; want %d seen, %d shared, 1 request", len(obs.calls), shared, u.hits.Load(), n, n-1)
	}
}
