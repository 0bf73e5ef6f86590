package hardening_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

func TestCSRFPrevention(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	res := env.ID(t, "resource", 0)
	q := `{ resource(id: "` + res + `") { id } }`
	auth := env.Bearer().Header()
	with := func(name, value string) http.Header {
		h := auth.Clone()
		h.Set(name, value)
		return h
	}
	jsonBody, _ := json.Marshal(map[string]any{"query": q})

	refused := []struct {
		name, method, contentType string // a GET sends q in its query string
		body                      []byte
	}{
		{"bare GET", http.MethodGet, "", nil},
		{"text/plain POST", http.MethodPost, "text/plain", jsonBody},
		{"form POST", http.MethodPost, "application/x-www-form-urlencoded", []byte("query=" + url.QueryEscape(q))},
		{"multipart POST", http.MethodPost, "multipart/form-data; boundary=x", []byte("--x--")},
		{"POST without content type", http.MethodPost, "", jsonBody},
	}
	for _, tc := range refused {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			env.ResetCalls()
			var r *testenv.Response
			if tc.method == http.MethodGet {
				r = get(t, env, gqlclient.Request{Query: q}, auth)
			} else {
				r = postBody(t, env, tc.contentType, tc.body, auth)
			}
			only(t, r, "CSRF_PREVENTED")
			if r.Status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", r.Status)
			}
			env.ExpectNoCalls(t)
		})
	}
	for _, h := range []string{"GraphQL-Require-Preflight", "X-Requested-With", "Apollo-Require-Preflight"} {
		t.Run("GET with "+h, func(t *testing.T) {
			r := get(t, env, gqlclient.Request{Query: q}, with(h, "1"))
			if r.Status != http.StatusOK || len(r.Errors) > 0 || !strings.Contains(string(r.Data), res) {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
		})
	}
	t.Run("JSON POST passes", func(t *testing.T) {
		r := postBody(t, env, "application/json; charset=utf-8", jsonBody, auth)
		if r.Status != http.StatusOK || len(r.Errors) > 0 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("switched off", func(t *testing.T) {
		off := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) { o.DisableCSRFPrevention = true }})
		r := get(t, off, gqlclient.Request{Query: `{ __typename }`}, nil)
		if r.Status != http.StatusOK || len(r.Errors) > 0 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
}

func TestBodyLimitsAndBatches(t *testing.T) {
	env := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) { o.MaxBodyBytes = 64 << 10 }})
	res := env.ID(t, "resource", 0)
	creds := env.Bearer().Header()
	postJSON := func(t *testing.T, body []byte) *testenv.Response {
		t.Helper()
		return postBody(t, env, "application/json", body, creds)
	}

	t.Run("huge variables: 413", func(t *testing.T) {
		env.ResetCalls()
		body, _ := json.Marshal(map[string]any{
			"query":     `query($id: ID!) { resource(id: $id) { id } }`,
			"variables": map[string]any{"id": res, "pad": strings.Repeat("x", 100<<10)},
		})
		r := postJSON(t, body)
		only(t, r, "REQUEST_TOO_LARGE")
		if r.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", r.Status)
		}
		env.ExpectNoCalls(t)
	})
	t.Run("body without Content-Length: 413", func(t *testing.T) {
		env.ResetCalls()
		big := `{"query": "{ __typename }", "variables": {"pad": "` + strings.Repeat("y", 100<<10) + `"}}`
		ctx, cancel := context.WithTimeout(t.Context(), answerTimeout)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.FacadeURL, struct{ *strings.Reader }{strings.NewReader(big)}) // hides the length: chunked
		req.Header = creds.Clone()
		req.Header.Set("Content-Type", "application/json")
		r, err := env.GraphQL.Do(req)
		r = answered(t, "chunked POST", r, err)
		if r.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked oversized body: status %d", r.Status)
		}
		env.ExpectNoCalls(t)
	})
	t.Run("batched array: 400, body not echoed", func(t *testing.T) {
		env.ResetCalls()
		body := []byte(`[{"query":"{ resource(id: \"` + res + `\") { id } }"},{"query":"{ __typename }"}]`)
		r := postJSON(t, body)
		only(t, r, "BAD_REQUEST")
		if r.Status != http.StatusBadRequest || strings.Contains(string(r.Raw), res) {
			t.Errorf("%d %s", r.Status, r.Raw)
		}
		env.ExpectNoCalls(t)
	})
	t.Run("malformed JSON: 400", func(t *testing.T) {
		r := postJSON(t, []byte(`{"query": "{ __typename }"`))
		only(t, r, "BAD_REQUEST")
		if r.Status != http.StatusBadRequest {
			t.Errorf("status %d", r.Status)
		}
	})
	t.Run("within the limit: served", func(t *testing.T) {
		body := bytes.Repeat([]byte(" "), 32<<10)
		body = append(body, `{"query": "{ __typename }"}`...)
		r := postJSON(t, body)
		if r.Status != http.StatusOK || len(r.Errors) > 0 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
}

func TestSuggestionsCanBeDisabled(t *testing.T) {
	q := `{ resourc(id: "x") { id } }`
	on := testenv.New(t, testenv.Options{})
	if r := query(t, on, on.Bearer(), q, nil); !strings.Contains(string(r.Raw), "Did you mean") {
		t.Fatalf("default: no suggestion in %s", r.Raw)
	}
	off := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) {
		o.DisableSuggestions = true
		o.Introspection = false
	}})
	r := query(t, off, off.Bearer(), q, nil)
	if len(r.Errors) == 0 || strings.Contains(string(r.Raw), "Did you mean") || strings.Contains(string(r.Raw), `"resource"`) {
		t.Fatalf("suggestions off: %s", r.Raw)
	}
	r = query(t, off, testenv.Creds{}, `{ __schema { types { name } } }`, nil)
	if len(r.Errors) == 0 || strings.Contains(string(r.Raw), `"types"`) {
		t.Fatalf("introspection off: %s", r.Raw)
	}
}
