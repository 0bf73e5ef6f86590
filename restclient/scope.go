package restclient

import (
	"context"
	"net/url"
)

// A caller's settings in the context
//
// What a context says about the calls made with it — the credentials
// (WithCredentials), that results are only read (WithReadOnlyResults), that
// the response cache is not read (WithoutCacheReads) and the call hooks
// (WithCallHooks), that they are background work (Scope.Background) — is
// one context value, a *scope. Each of those functions
// copies the scope ctx carries and changes one thing; WithScope sets them
// all at once, so that a request's settings cost one context value and one
// scope, and a call reads them all with one lookup.

// Scope is what WithScope adds to a context's settings.
type Scope struct {
	// Credentials, when set, are the calls' credentials, as WithCredentials.
	Credentials *Credentials
	// ReadOnlyResults is WithReadOnlyResults (false keeps what ctx says).
	ReadOnlyResults bool
	// NoCacheReads is WithoutCacheReads (false keeps what ctx says).
	NoCacheReads bool
	// Background marks the calls as background work (a poller's): an
	// interactive caller never waits for a shared GET that a background
	// caller started and that has not been sent yet (shared.go). False
	// keeps what ctx says.
	Background bool
	// Hooks are installed inside the hooks ctx carries, as WithCallHooks.
	Hooks []CallHooks
	// Reads, when set, answers the context's decoded GETs before the
	// response cache and hears every 2xx body they read (ReadLog); nil
	// keeps what ctx says.
	Reads ReadLog
}

// ReadLog is the memory of one caller's GETs across its executions (a live
// query's re-runs): Answer gives the body to answer a GET with, as a cache
// hit (no upstream call; CallInfo.Cached), and Read hears the 2xx body of
// each decoded GET answered with the context (by Answer, the response cache
// or the upstream). id is the unescaped path parameter ("" without), q the
// query; body must not be modified. Safe for concurrent use.
type ReadLog interface {
	Answer(route, uri string) (body []byte, ok bool)
	Read(route, id string, q url.Values, uri string, body []byte)
}

// scope is the settings of a context; never modified once stored.
type scope struct {
	who          who // when hasWho
	hasWho       bool
	readOnly     bool
	noCacheReads bool
	background   bool
	hooks        []CallHooks // outermost first
	reads        ReadLog
	headerVals   [2]string // who's headerVals when set here
	// buf holds hooks when they fit (a request installs at most four sets),
	// saving the chain its own allocation.
	buf [4]CallHooks
}

type scopeKey struct{}

// noScope is the settings of a context without any.
var noScope = &scope{}

// scopeOf returns ctx's settings (noScope when it has none).
func scopeOf(ctx context.Context) *scope {
	if s, ok := ctx.Value(scopeKey{}).(*scope); ok {
		return s
	}
	return noScope
}

// WithScope returns ctx with s added to the settings it carries: one
// context value however many settings s has.
func WithScope(ctx context.Context, s Scope) context.Context {
	outer := scopeOf(ctx)
	n := &scope{who: outer.who, hasWho: outer.hasWho,
		readOnly: outer.readOnly || s.ReadOnlyResults, noCacheReads: outer.noCacheReads || s.NoCacheReads,
		background: outer.background || s.Background, reads: outer.reads}
	if s.Reads != nil {
		n.reads = s.Reads
	}
	if s.Credentials != nil {
		n.who, n.hasWho = identifyIn(*s.Credentials, &n.headerVals), true
	}
	n.hooks = outer.hooks
	if len(s.Hooks) > 0 {
		chain := n.buf[:0]
		if len(outer.hooks)+len(s.Hooks) > len(n.buf) {
			chain = make([]CallHooks, 0, len(outer.hooks)+len(s.Hooks))
		}
		n.hooks = append(append(chain, outer.hooks...), s.Hooks...)
	}
	return context.WithValue(ctx, scopeKey{}, n)
}
