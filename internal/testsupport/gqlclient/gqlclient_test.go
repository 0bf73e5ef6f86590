package gqlclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// echo answers every request with a GraphQL response describing it: its
// method, content type, credentials and body (or query string).
func echo(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/text" {
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html>bad gateway</html>")
			return
		}
		w.Header().Set("X-Seen", "1")
		w.WriteHeader(http.StatusAccepted)
		json.NewEncoder(w).Encode(map[string]any{
			"data": map[string]any{
				"method": r.Method, "contentType": r.Header.Get("Content-Type"), "auth": r.Header.Get("Authorization"),
				"network": r.Header.Get("service-network-id"), "extra": r.Header.Values("X-Extra"), "body": string(body), "query": r.URL.RawQuery,
			},
			"errors":     []any{map[string]any{"message": "m", "path": []any{"a", 0, "b"}, "extensions": map[string]any{"code": "C"}}},
			"extensions": map[string]any{"upstream": map[string]any{"count": 1}},
			"status":     "a field the answer happens to carry",
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

type seen struct {
	Method, ContentType, Auth, Network, Body, Query string
	Extra                                           []string
}

func decodeSeen(t *testing.T, r *Response) seen {
	t.Helper()
	var s seen
	if err := json.Unmarshal(r.Data, &s); err != nil {
		t.Fatalf("data %s: %v", r.Data, err)
	}
	return s
}

func TestClientMethods(t *testing.T) {
	srv := echo(t)
	c := &Client{URL: srv.URL + "/graphql", Header: Credentials("Bearer client", "net-1")}
	ctx := context.Background()
	req := Request{Query: "{ a }", OperationName: "Op", Variables: map[string]any{"v": 1}}

	r, err := c.Post(ctx, req, http.Header{"Authorization": {"Bearer call"}, "X-Extra": {"x", "y"}})
	if err != nil {
		t.Fatal(err)
	}
	s := decodeSeen(t, r)
	if s.Method != "POST" || s.ContentType != "application/json" || s.Auth != "Bearer call" || s.Network != "net-1" ||
		!slices.Equal(s.Extra, []string{"x", "y"}) || s.Body != `{"query":"{ a }","operationName":"Op","variables":{"v":1}}` {
		t.Errorf("Post sent %+v (the call's header replaces the client's)", s)
	}
	if r.Status != http.StatusAccepted || r.Header.Get("X-Seen") != "1" || !strings.Contains(string(r.Raw), `"errors"`) {
		t.Errorf("response %d %v %s", r.Status, r.Header, r.Raw)
	}
	if len(r.Errors) != 1 || r.Errors[0].Code() != "C" || r.Errors[0].PathString() != "a.0.b" || !slices.Equal(r.Codes(), []string{"C"}) {
		t.Errorf("errors %+v", r.Errors)
	}
	if string(r.Extensions["upstream"]) != `{"count":1}` {
		t.Errorf("extensions %s", r.Extensions["upstream"])
	}

	r, err = c.PostBody(ctx, "", []byte("raw"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := decodeSeen(t, r); s.ContentType != "" || s.Body != "raw" || s.Auth != "Bearer client" {
		t.Errorf("PostBody sent %+v", s)
	}

	// PostRaw: the same exchange, the answer undecoded; Decode gives what
	// PostBody would have.
	status, h, raw, err := c.PostRaw(ctx, "application/json", []byte("raw"), http.Header{"X-Extra": {"z"}})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusAccepted || h.Get("X-Seen") != "1" {
		t.Errorf("PostRaw answer %d %v", status, h)
	}
	if r, err := Decode(status, h, raw); err != nil {
		t.Error(err)
	} else if s := decodeSeen(t, r); s.Method != "POST" || s.ContentType != "application/json" || s.Body != "raw" || s.Auth != "Bearer client" || !slices.Equal(s.Extra, []string{"z"}) {
		t.Errorf("PostRaw sent %+v", s)
	}

	r, err = c.Get(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := decodeSeen(t, r); s.Method != "GET" || s.Body != "" || s.Query != "operationName=Op&query=%7B+a+%7D&variables=%7B%22v%22%3A1%7D" {
		t.Errorf("Get sent %+v", s)
	}

	byID := Request{DocumentID: "sha256:ab", Extensions: map[string]any{"e": true}}
	r, err = c.Post(ctx, byID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := decodeSeen(t, r); s.Body != `{"extensions":{"e":true},"documentId":"sha256:ab"}` {
		t.Errorf("Post of a document id sent %+v", s)
	}
	r, err = c.Get(ctx, byID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := decodeSeen(t, r); s.Query != "documentId=sha256%3Aab&extensions=%7B%22e%22%3Atrue%7D" {
		t.Errorf("Get of a document id sent %+v", s)
	}

	hr, _ := http.NewRequestWithContext(ctx, http.MethodPut, c.URL, strings.NewReader("put"))
	hr.Header.Set("X-Extra", "z")
	r, err = c.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	if s := decodeSeen(t, r); s.Method != "PUT" || s.Body != "put" || s.Auth != "Bearer client" || !slices.Equal(s.Extra, []string{"z"}) {
		t.Errorf("Do sent %+v", s)
	}
}

func TestNotJSON(t *testing.T) {
	srv := echo(t)
	c := &Client{URL: srv.URL + "/text"}
	r, err := c.Post(context.Background(), Request{Query: "{ a }"}, nil)
	var nj *NotJSONError
	if !errors.As(err, &nj) || nj.Status != http.StatusBadGateway || r == nil || r.Status != http.StatusBadGateway || string(r.Raw) != "<html>bad gateway</html>" {
		t.Fatalf("err %v, response %+v", err, r)
	}
}

// TestDecode: an answer recorded in-process decodes as one read over HTTP.
func TestDecode(t *testing.T) {
	h := http.Header{"X-A": {"1"}}
	r, err := Decode(http.StatusOK, h, []byte(`{"data":{"x":1},"errors":[{"message":"m","extensions":{"code":"C"}}]}`))
	if err != nil || r.Status != http.StatusOK || r.Header.Get("X-A") != "1" || string(r.Data) != `{"x":1}` || !slices.Equal(r.Codes(), []string{"C"}) {
		t.Fatalf("%v %+v", err, r)
	}
	r, err = Decode(http.StatusBadRequest, nil, []byte("not json"))
	var nj *NotJSONError
	if !errors.As(err, &nj) || nj.Status != http.StatusBadRequest || r.Status != http.StatusBadRequest {
		t.Fatalf("%v %+v", err, r)
	}
}
