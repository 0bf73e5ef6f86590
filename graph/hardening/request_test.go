package hardening_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testenv"
)

func TestCSRFPrevention(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	res := env.ID(t, "resource", 0)
	q := `{ resource(id: "` + res + `") { id } }`
	auth := map[string]string{"Authorization": env.Bearer().Authorization, "service-network-id": env.Bearer().NetworkID}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range auth {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	getURL := env.FacadeURL + "?query=" + url.QueryEscape(q)
	jsonBody, _ := json.Marshal(map[string]any{"query": q})

	refused := []struct {
		name, method, target string
		hdr                  map[string]string
		body                 []byte
	}{
		{"bare GET", http.MethodGet, getURL, with(nil), nil},
		{"text/plain POST", http.MethodPost, env.FacadeURL, with(map[string]string{"Content-Type": "text/plain"}), jsonBody},
		{"form POST", http.MethodPost, env.FacadeURL, with(map[string]string{"Content-Type": "application/x-www-form-urlencoded"}), []byte("query=" + url.QueryEscape(q))},
		{"multipart POST", http.MethodPost, env.FacadeURL, with(map[string]string{"Content-Type": "multipart/form-data; boundary=x"}), []byte("--x--")},
		{"POST without content type", http.MethodPost, env.FacadeURL, with(nil), jsonBody},
	}
	for _, tc := range refused {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			env.ResetCalls()
			r := send(t, env, tc.method, tc.target, tc.hdr, tc.body)
			r.only(t, "CSRF_PREVENTED")
			if r.status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", r.status)
			}
			env.ExpectNoCalls(t)
		})
	}
	for _, h := range []string{"GraphQL-Require-Preflight", "X-Requested-With", "Apollo-Require-Preflight"} {
		t.Run("GET with "+h, func(t *testing.T) {
			r := send(t, env, http.MethodGet, getURL, with(map[string]string{h: "1"}), nil)
			if r.status != http.StatusOK || len(r.body.Errors) > 0 || !strings.Contains(string(r.body.Data), res) {
				t.Fatalf("%d %s", r.status, r.raw)
			}
		})
	}
	t.Run("JSON POST passes", func(t *testing.T) {
		r := send(t, env, http.MethodPost, env.FacadeURL, with(map[string]string{"Content-Type": "application/json; charset=utf-8"}), jsonBody)
		if r.status != http.StatusOK || len(r.body.Errors) > 0 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
	})
	t.Run("switched off", func(t *testing.T) {
		off := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) { o.DisableCSRFPrevention = true }})
		r := send(t, off, http.MethodGet, off.FacadeURL+"?query="+url.QueryEscape(`{ __typename }`), nil, nil)
		if r.status != http.StatusOK || len(r.body.Errors) > 0 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
	})
}

func TestBodyLimitsAndBatches(t *testing.T) {
	env := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) { o.MaxBodyBytes = 64 << 10 }})
	res := env.ID(t, "resource", 0)
	jsonHdr := map[string]string{"Content-Type": "application/json", "Authorization": env.Bearer().Authorization, "service-network-id": env.Bearer().NetworkID}

	t.Run("huge variables: 413", func(t *testing.T) {
		env.ResetCalls()
		body, _ := json.Marshal(map[string]any{
			"query":     `query($id: ID!) { resource(id: $id) { id } }`,
			"variables": map[string]any{"id": res, "pad": strings.Repeat("x", 100<<10)},
		})
		r := send(t, env, http.MethodPost, env.FacadeURL, jsonHdr, body)
		r.only(t, "REQUEST_TOO_LARGE")
		if r.status != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", r.status)
		}
		env.ExpectNoCalls(t)
	})
	t.Run("body without Content-Length: 413", func(t *testing.T) {
		env.ResetCalls()
		big := `{"query": "{ __typename }", "variables": {"pad": "` + strings.Repeat("y", 100<<10) + `"}}`
		req, _ := http.NewRequest(http.MethodPost, env.FacadeURL, struct{ *strings.Reader }{strings.NewReader(big)}) // hides the length: chunked
		for k, v := range jsonHdr {
			req.Header.Set(k, v)
		}
		resp, err := env.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked oversized body: status %d", resp.StatusCode)
		}
		env.ExpectNoCalls(t)
	})
	t.Run("batched array: 400, body not echoed", func(t *testing.T) {
		env.ResetCalls()
		body := []byte(`[{"query":"{ resource(id: \"` + res + `\") { id } }"},{"query":"{ __typename }"}]`)
		r := send(t, env, http.MethodPost, env.FacadeURL, jsonHdr, body)
		r.only(t, "BAD_REQUEST")
		if r.status != http.StatusBadRequest || strings.Contains(r.raw, res) {
			t.Errorf("%d %s", r.status, r.raw)
		}
		env.ExpectNoCalls(t)
	})
	t.Run("malformed JSON: 400", func(t *testing.T) {
		r := send(t, env, http.MethodPost, env.FacadeURL, jsonHdr, []byte(`{"query": "{ __typename }"`))
		r.only(t, "BAD_REQUEST")
		if r.status != http.StatusBadRequest {
			t.Errorf("status %d", r.status)
		}
	})
	t.Run("within the limit: served", func(t *testing.T) {
		body := bytes.Repeat([]byte(" "), 32<<10)
		body = append(body, `{"query": "{ __typename }"}`...)
		r := send(t, env, http.MethodPost, env.FacadeURL, jsonHdr, body)
		if r.status != http.StatusOK || len(r.body.Errors) > 0 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
	})
}

func TestSuggestionsCanBeDisabled(t *testing.T) {
	q := `{ resourc(id: "x") { id } }`
	on := testenv.New(t, testenv.Options{})
	if r := query(t, on, on.Bearer(), q, nil); !strings.Contains(r.raw, "Did you mean") {
		t.Fatalf("default: no suggestion in %s", r.raw)
	}
	off := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) {
		o.DisableSuggestions = true
		o.Introspection = false
	}})
	r := query(t, off, off.Bearer(), q, nil)
	if len(r.body.Errors) == 0 || strings.Contains(r.raw, "Did you mean") || strings.Contains(r.raw, `"resource"`) {
		t.Fatalf("suggestions off: %s", r.raw)
	}
	r = query(t, off, testenv.Creds{}, `{ __schema { types { name } } }`, nil)
	if len(r.body.Errors) == 0 || strings.Contains(r.raw, `"types"`) {
		t.Fatalf("introspection off: %s", r.raw)
	}
}
