// Command floor is the HTTP floor of the facade's single-resource query: a
// program with the facade's command line that answers
//
//	query Resource($id: ID!) { resource(id: $id) { id title type capacity } }
//
// with no GraphQL at all: it reads the POST body (encoding/json), makes the
// one upstream GET /resources/v1/{id} with the caller's credentials through
// the same kind of transport as restclient (net/http's, its idle connections
// sized as restclient's), and writes the four fields back (encoding/json), on
// net/http's server as the facade. Its CPU per request under the bench's
// load is what an HTTP server, one upstream exchange and the JSON on both
// sides cost by themselves: the part of the facade's figure that no change to
// the facade's own code can remove.
//
//	go build -o /tmp/floor ./bench/floor
//	go run ./bench -load-only -only resource -load-compare /tmp/floor
//
// It serves that query only; it is a measuring instrument, not a facade.
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
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	upstream := flag.String("upstream", "", "REST service base URL")
	// The facade's other flags, as the bench passes them; ignored.
	for _, name := range []string{"upstream-rps", "cache-ttl", "playground", "log-level"} {
		flag.String(name, "", "ignored")
	}
	flag.Parse()
	f, err := newFloor(*upstream)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe(*addr, f))
}

// floor answers the resource query from the upstream at base.
type floor struct {
	rt   http.RoundTripper
	base string
}

func newFloor(upstream string) (*floor, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, errors.New("floor: -upstream: want an http URL")
	}
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: 10 * time.Second}
	return &floor{rt: tr, base: upstream}, nil
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
	req, err := http.NewRequest(http.MethodGet, f.base+"/resources/v1/"+url.PathEscape(in.Variables["id"]), nil)
	if err != nil {
		return nil, http.StatusBadRequest, "id"
	}
	req.Header["Accept"] = []string{"application/json"}
	req.Header["Authorization"] = []string{string(auth)}
	if len(networkID) > 0 {
		req.Header["Service-Network-Id"] = []string{string(networkID)}
	}
	resp, err := f.rt.RoundTrip(req)
	if err != nil {
		return nil, http.StatusBadGateway, "upstream"
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, http.StatusBadGateway, "upstream"
	}
	var got struct {
		Resource resource `json:"resource"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		return nil, http.StatusBadGateway, "upstream body"
	}
	out, err := json.Marshal(map[string]any{"data": map[string]any{"resource": got.Resource}})
	if err != nil {
		return nil, http.StatusInternalServerError, "encoding"
	}
	return out, http.StatusOK, ""
}

// ServeHTTP serves the answer.
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
