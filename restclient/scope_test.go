package restclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
)

// WithScope and the one-setting functions build on each other: every
// setting is inherited by what is added inside it, credentials inside win,
// hooks nest (outermost first), also past the scope's own room for hooks.
func TestScopeSettingsNest(t *testing.T) {
	u := newUpstream(t)
	var seenAuth []string
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		seenAuth = append(seenAuth, r.Header.Get("Authorization"))
		io.WriteString(w, `{"resource":{"id":"r"}}`)
	})
	tr := &trail{}
	outerCreds := Credentials{Authorization: "Bearer outer", NetworkID: testNetwork}
	innerCreds := Credentials{Authorization: "Bearer inner", NetworkID: testNetwork}
	ctx := WithCredentials(ctxT(t), outerCreds)
	ctx = WithScope(ctx, Scope{ReadOnlyResults: true, Hooks: []CallHooks{tr.hooks("h0", nil), tr.hooks("h1", nil)}})
	ctx = WithoutCacheReads(ctx)
	if id := IdentityFromContext(ctx); id != outerCreds.Identity() {
		t.Fatalf("identity %q, want the outer credentials'", id)
	}
	ctx = WithScope(ctx, Scope{Credentials: &innerCreds, Hooks: []CallHooks{tr.hooks("h2", nil), tr.hooks("h3", nil)}})
	ctx = WithCallHooks(ctx, tr.hooks("h4", nil)) // five sets: more than a scope holds itself
	s := scopeOf(ctx)
	if !s.readOnly || !s.noCacheReads || !s.hasWho || s.who.Credentials != innerCreds || s.who.id != innerCreds.Identity() {
		t.Fatalf("settings not inherited: readOnly %v, noCacheReads %v, credentials %v", s.readOnly, s.noCacheReads, s.who.Credentials)
	}
	if c, ok := CredentialsFromContext(ctx); !ok || c != innerCreds {
		t.Fatalf("CredentialsFromContext = %v, %v", c, ok)
	}
	if _, _, err := u.client().Resources.GetResource(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 5 {
		want = append(want, fmt.Sprintf("h%d.before GET /resources/v1/{id}", i))
	}
	for i := 4; i >= 0; i-- {
		want = append(want, fmt.Sprintf("h%d.after OK", i))
	}
	if !slices.Equal(tr.steps, want) {
		t.Errorf("steps %q, want %q", tr.steps, want)
	}
	if !slices.Equal(seenAuth, []string{innerCreds.Authorization}) {
		t.Errorf("upstream saw Authorization %q, want the inner credentials'", seenAuth)
	}
	// The settings of an outer context are unchanged by what is added inside.
	if outer := scopeOf(WithCredentials(ctxT(t), outerCreds)); outer.readOnly || outer.noCacheReads || len(outer.hooks) != 0 {
		t.Errorf("outer context changed: %+v", outer)
	}
}

// A request's settings (credentials, read-only results, four hook sets) are
// one context value and one scope, plus the credentials' identity: three
// allocations, where setting them one by one costs seven.
func TestScopeAllocations(t *testing.T) {
	hooks := []CallHooks{{Before: func(context.Context, CallStart) error { return nil }}, {}, {}, {After: func(context.Context, CallInfo) {}}}
	creds := testCreds
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		c := WithScope(ctx, Scope{Credentials: &creds, ReadOnlyResults: true, NoCacheReads: true, Hooks: hooks})
		if IdentityFromContext(c) != testID {
			t.Fatal("no identity")
		}
	}); n > 3 {
		t.Errorf("WithScope: %v allocations, want at most 3", n)
	}
}
