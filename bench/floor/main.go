// Command floor is the HTTP floor of the facade's single-resource query: a
// program with the facade's command line that answers
//
//	query Resource($id: ID!) { resource(id: $id) { id title type capacity } }
//
// with no GraphQL at all: it reads the POST body (encoding/json), makes the
// one upstream GET /resources/v1/{id} with the caller's credentials through
// the same connection pool as restclient (fasthttp's HostClient), and writes
// the four fields back (encoding/json). Its CPU per request under the bench's
// load is what an HTTP server, one upstream exchange and the JSON on both
// sides cost by themselves: the part of the facade's figure that no change to
// the facade's own code can remove.
//
//	go build -o /tmp/floor ./bench/floor
//	printf '#!/bin/sh\nexec /tmp/floor -server fasthttp "$@"\n' > /tmp/floor-fast; chmod +x /tmp/floor-fast
//	go run ./bench -load-only -only resource -load-compare /tmp/floor,/tmp/floor-fast
//
// -server net/http (the default, the facade's server) or fasthttp. It serves
// that query only; it is a measuring instrument, not a facade.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"net/http"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	upstream := flag.String("upstream", "", "REST service base URL")
	server := flag.String("server", "net/http", "the HTTP server: net/http or fasthttp")
	// The facade's other flags, as the bench passes them; ignored.
	for _, name := range []string{"upstream-rps", "cache-ttl", "playground", "log-level"} {
		flag.String(name, "", "ignored")
	}
	flag.Parse()
	f, err := newFloor(*upstream)
	if err != nil {
		log.Fatal(err)
	}
	switch *server {
	case "net/http":
		log.Fatal(http.ListenAndServe(*addr, f))
	case "fasthttp":
		log.Fatal(fasthttp.ListenAndServe(*addr, f.serveFast))
	default:
		log.Fatalf("floor: -server %q: want net/http or fasthttp", *server)
	}
}

// floor answers the resource query from the upstream at base.
type floor struct {
	hc   *fasthttp.HostClient
	base string
}

func newFloor(upstream string) (*floor, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, errors.New("floor: -upstream: want an http URL")
	}
	return &floor{hc: &fasthttp.HostClient{Addr: u.Host, MaxConns: 64, MaxConnWaitTimeout: 10 * time.Second}, base: upstream}, nil
}

// query is the one query the floor answers: bench/queries.go's
// resourceQuery, byte for byte (any other is refused, so a change there shows
// as the floor's errors in the bench's table).
const query = `query Resource($id: ID!) { resource(id: $id) { id title type capacity } }`

// request is the GraphQL request's body, as far as the floor reads it.
type request struct {
	Query     string            `json:"query"`
	Variables map[string]string `json:"variables"`
}

// resource is the answer's selection.
type resource struct {
	ID       string  `json:"id"`
	Title    *string `json:"title"`
	Type     *string `json:"type"`
	Capacity *int    `json:"capacity"`
}

// answer makes the upstream GET for body's $id with auth and networkID and
// returns the GraphQL answer, or a status and message.
func (f *floor) answer(body []byte, auth, networkID []byte) ([]byte, int, string) {
	var in request
	if err := json.Unmarshal(body, &in); err != nil || in.Query != query || in.Variables["id"] == "" {
		return nil, http.StatusBadRequest, "want the resource query with $id"
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(f.base + "/resources/v1/" + url.PathEscape(in.Variables["id"]))
	req.Header.Set("Accept", "application/json")
	req.Header.SetBytesV("Authorization", auth)
	if len(networkID) > 0 {
		req.Header.SetBytesV("Service-Network-Id", networkID)
	}
	if err := f.hc.DoTimeout(req, resp, 10*time.Second); err != nil || resp.StatusCode() != http.StatusOK {
		return nil, http.StatusBadGateway, "upstream"
	}
	var got struct {
		Resource resource `json:"resource"`
	}
	if err := json.Unmarshal(resp.Body(), &got); err != nil {
		return nil, http.StatusBadGateway, "upstream body"
	}
	out, err := json.Marshal(map[string]any{"data": map[string]any{"resource": got.Resource}})
	if err != nil {
		return nil, http.StatusInternalServerError, "encoding"
	}
	return out, http.StatusOK, ""
}

// ServeHTTP serves the answer with net/http.
func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Method == http.MethodPost && r.URL.Path == "/graphql" {
		body, _ = io.ReadAll(r.Body)
	}
	out, status, msg := f.answer(body, []byte(r.Header.Get("Authorization")), []byte(r.Header.Get("Service-Network-Id")))
	w.Header().Set("Content-Type", "application/graphql-response+json")
	if status != http.StatusOK {
		out = []byte(`{"errors":[{"message":"` + msg + `"}]}`)
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// serveFast serves the answer with fasthttp.
func (f *floor) serveFast(ctx *fasthttp.RequestCtx) {
	var body []byte
	if ctx.IsPost() && string(ctx.Path()) == "/graphql" {
		body = ctx.PostBody()
	}
	out, status, msg := f.answer(body, ctx.Request.Header.Peek("Authorization"), ctx.Request.Header.Peek("Service-Network-Id"))
	ctx.SetContentType("application/graphql-response+json")
	if status != http.StatusOK {
		out = []byte(`{"errors":[{"message":"` + msg + `"}]}`)
	}
	ctx.SetStatusCode(status)
	ctx.SetBody(out)
}
