// Package overhttp is the facade's GraphQL-over-HTTP transport, following the
// GraphQL over HTTP specification (https://graphql.github.io/graphql-over-http/draft/):
// the response media type negotiated from Accept, and the status code and
// body of every answer.
//
//   - Media types: application/graphql-response+json and application/json,
//     the one the Accept header prefers; without Accept, or with only
//     wildcards, application/json. An Accept that admits neither is 406.
//   - application/json: 200 for every well-formed request, whatever its
//     GraphQL errors (parse, validation, variable coercion, limits).
//   - application/graphql-response+json: a request error (the operation did
//     not run, so the body has no "data" entry) is 400; a response with data
//     (even null, after field errors) is 200.
//   - A request that is not well-formed (graph/guard: malformed JSON, no
//     query, a parameter of the wrong type) is 400 in both; other refusals
//     keep their own status (405, 406, 413, 415, 503).
//   - A subscription cannot be executed in one response (graph serves it
//     over WebSocket and SSE): 400 BAD_REQUEST in both.
//
// The handler (graph.NewHandler) negotiates and decodes the request first
// (Negotiate, graph/guard) and puts both in the context (WithRequest); the
// Transport, the only one of the gqlgen server, executes it and writes the
// answer.
//
// A response is written only once the operation has executed: its data is
// then one buffer gqlgen's executor has marshalled (bounded by the response
// size cap of graph.NewHandler, -max-response-bytes), and nothing the
// operation holds (admission units, graph/admission) waits for the client to
// read it. From then on the client has WriteTimeout to take it. The
// exception is incremental delivery (@defer, AcceptsIncremental): the
// response is then written in parts over multipart/mixed or Server-Sent
// Events, each as soon as its data is ready, each within WriteTimeout, and
// the operation holds its admission units until the last.
package overhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/guard"
	"github.com/workspacenet/facade/internal/base/ctxval"
)

// The response media types.
const (
	GraphQLResponseJSON = "application/graphql-response+json"
	JSON                = "application/json"
)

// ContentType is the Content-Type header of a response in media type mt.
func ContentType(mt string) string {
	switch mt { // the two the facade answers in, without a concatenation
	case GraphQLResponseJSON:
		return GraphQLResponseJSON + charset
	case JSON:
		return JSON + charset
	}
	return mt + charset
}

const charset = "; charset=utf-8"

var (
	graphQLResponseJSONHeader = []string{GraphQLResponseJSON + charset}
	jsonHeader                = []string{JSON + charset}
)

// Negotiate returns the response media type h's Accept header prefers, and
// false when it admits neither (the caller answers 406, in application/json).
// Each media type gets the quality of the most specific range that matches
// it (exact, then application/*, then */*); the highest quality wins, then a
// type named exactly over one matched by a wildcard, then the first named.
// No Accept, or wildcards only, is application/json.
func Negotiate(h http.Header) (string, bool) {
	accept := strings.Join(h.Values("Accept"), ",")
	if strings.TrimSpace(accept) == "" {
		return JSON, true
	}
	best := jsonMatches(accept)
	// preferred reports whether a wins over b; offers lists JSON first, so
	// a tie between wildcards keeps JSON.
	preferred := func(a, b match) bool {
		if a.q != b.q {
			return a.q > b.q
		}
		if aExact, bExact := a.specificity == 3, b.specificity == 3; aExact != bExact || aExact {
			return aExact && (!bExact || a.pos < b.pos)
		}
		return false
	}
	chosen, found := JSON, false
	var top match
	for i, m := range best {
		if m.specificity > 0 && m.q > 0 && (!found || preferred(m, top)) {
			chosen, top, found = offers[i], m, true
		}
	}
	return chosen, found
}

// offers are the JSON media types the endpoint answers in, JSON first.
var offers = [...]string{JSON, GraphQLResponseJSON}

// match is how an Accept header admits a media type: the quality of its
// most specific range that matches (specificity 0 none, 1 */*, 2
// application/*, 3 exact), at position pos.
type match struct {
	q           float64
	specificity int
	pos         int
}

// jsonMatches returns how the Accept header accept admits each of offers.
func jsonMatches(accept string) [len(offers)]match {
	var best [len(offers)]match
	for pos, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil || q < 0 || q > 1 {
				continue
			}
		}
		for i, offer := range offers {
			spec := 0
			switch mt {
			case offer:
				spec = 3
			case "application/*":
				spec = 2
			case "*/*":
				spec = 1
			}
			if spec > best[i].specificity {
				best[i] = match{q: q, specificity: spec, pos: pos}
			}
		}
	}
	return best
}

// jsonQuality is the highest quality the Accept header accept gives a JSON
// media type (0 when it admits none).
func jsonQuality(accept string) float64 {
	q := 0.0
	for _, m := range jsonMatches(accept) {
		if m.specificity > 0 {
			q = max(q, m.q)
		}
	}
	return q
}

// NotAcceptable is the refusal of a request whose Accept admits no media type
// the endpoint answers in.
func NotAcceptable() *guard.Refusal {
	return &guard.Refusal{Status: http.StatusNotAcceptable, Code: errcode.NotAcceptable,
		Message: "the Accept header admits neither " + GraphQLResponseJSON + " nor " + JSON}
}

type requestKey struct{}

// request is what WithRequest puts in the context, and the context itself
// (ctx: its parent with the request as the value of requestKey), in one
// allocation.
type request struct {
	ctx       ctxval.Context[requestKey, *request]
	params    *guard.Params
	mediaType string

	// The Part of the payload the operation returned last (Annotate).
	partMu   sync.Mutex
	partResp *graphql.Response
	part     Part
}

// WithRequest returns ctx carrying the decoded parameters of the request and
// its negotiated media type, for the Transport. The Transport uses
// p.RawParams as gqlgen's parameters, setting their Headers and ReadTime.
func WithRequest(ctx context.Context, p *guard.Params, mediaType string) context.Context {
	r := &request{params: p, mediaType: mediaType}
	r.ctx = ctxval.Context[requestKey, *request]{Context: ctx, V: r}
	return &r.ctx
}

// Transport executes the request WithRequest put in the context, whatever
// its method (the handler has refused what it does not serve), and writes
// the answer as the package comment says.
type Transport struct {
	// WriteTimeout is the write deadline of a response, from the moment it
	// is ready (http.ResponseController); 0: only the server's own.
	WriteTimeout time.Duration
}

var _ graphql.Transport = Transport{}

// Supports implements graphql.Transport: every request reaches this one.
func (Transport) Supports(*http.Request) bool { return true }

// Do implements graphql.Transport.
func (t Transport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	req, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		// A bug: the handler always decodes first.
		(&guard.Refusal{Status: http.StatusInternalServerError, Code: errcode.Internal, Message: "internal error"}).Write(w, ContentType(JSON))
		return
	}
	// The header's value slice of the media type, shared by the responses
	// (header values are replaced, never written in place).
	switch req.mediaType {
	case GraphQLResponseJSON:
		w.Header()["Content-Type"] = graphQLResponseJSONHeader
	case JSON:
		w.Header()["Content-Type"] = jsonHeader
	default:
		w.Header().Set("Content-Type", ContentType(req.mediaType))
	}
	params := &req.params.RawParams // this request's: no copy
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: graphql.GetStartTime(ctx), End: graphql.Now()}

	oc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		status := http.StatusOK
		if req.mediaType == GraphQLResponseJSON {
			status = http.StatusBadRequest
		}
		t.send(w, status, exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs))
		return
	}
	if oc.Operation.Operation == ast.Subscription {
		// A stream of results has no place in one HTTP response: the
		// request cannot be executed here (GraphQL over HTTP: 4xx).
		e := gqlerr.New(errcode.BadRequest, "a subscription is served over WebSocket (graphql-transport-ws) or SSE (Accept: text/event-stream), not in a plain HTTP response", nil)
		t.send(w, http.StatusBadRequest, exec.DispatchError(graphql.WithOperationContext(ctx, oc), gqlerror.List{e}))
		return
	}
	if r.Method == http.MethodGet && oc.Operation.Operation != ast.Query {
		// GET is safe: a mutation must be a POST (HTTP semantics: 405 and
		// the methods that would do).
		w.Header().Set("Allow", http.MethodPost)
		e := gqlerr.New(errcode.MethodNotAllowed, fmt.Sprintf("a %s cannot be sent by GET: send it as a POST", oc.Operation.Operation), nil)
		t.send(w, http.StatusMethodNotAllowed, exec.DispatchError(graphql.WithOperationContext(ctx, oc), gqlerror.List{e}))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	resp := responses(ctx)
	if resp != nil && HasNext(resp) {
		// Deferred parts follow (the client accepts them: graph strips
		// @defer from the operations of those that do not).
		if m := AcceptsIncremental(r.Header); m.Format != NotIncremental {
			t.stream(ctx, w, m, resp, responses)
			return
		}
	}
	status := http.StatusOK
	if resp == nil || len(resp.Data) == 0 && req.mediaType == GraphQLResponseJSON {
		// No data entry: the operation did not run (a refusal of a
		// response middleware).
		status = http.StatusBadRequest
	}
	t.send(w, status, resp)
}

// send writes resp (write) within WriteTimeout. A writer that cannot take a
// deadline (http.ErrNotSupported) leaves the server's write timeout alone in
// force.
func (t Transport) send(w http.ResponseWriter, status int, resp *graphql.Response) {
	if t.WriteTimeout > 0 {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(t.WriteTimeout))
	}
	write(w, status, resp)
}

// write writes resp as the spec says: "errors", "data" and "extensions" in
// that order, each only when present (gqlgen's Response always writes
// "data"; here there is no "data" entry when the operation did not run).
// The data, already JSON from gqlgen's executor, is written as it is: never
// re-validated, compacted or copied (it is the bulk of a response); the
// whole answer's length is its Content-Length. The
// errors and extensions are marshalled first, so a failure to marshal them is
// still a clean 500.
func write(w http.ResponseWriter, status int, resp *graphql.Response) {
	if resp == nil {
		resp = &graphql.Response{Errors: gqlerror.List{gqlerr.Internal()}}
		status = http.StatusInternalServerError
	}
	head := buffers.Get().(*bytes.Buffer)
	tail := buffers.Get().(*bytes.Buffer)
	defer func() {
		for _, b := range [...]*bytes.Buffer{head, tail} {
			if b.Cap() <= maxPooled {
				b.Reset()
				buffers.Put(b)
			}
		}
	}()
	head.Reset()
	tail.Reset()
	head.WriteByte('{')
	err := appendMember(head, "errors", resp.Errors, len(resp.Errors) > 0)
	if err == nil && len(resp.Data) > 0 {
		if head.Len() > 1 {
			head.WriteByte(',')
		}
		head.WriteString(`"data":`)
	}
	if err == nil && len(resp.Extensions) > 0 {
		if head.Len() > 1 || len(resp.Data) > 0 {
			tail.WriteByte(',')
		}
		err = appendMember(tail, "extensions", resp.Extensions, true)
	}
	tail.WriteByte('}')
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"errors":`+string(gqlerr.InternalErrors)+`}`)
		return
	}
	// The answer's length is known: sent as its Content-Length, net/http
	// writes it as it is rather than in chunks.
	w.Header().Set("Content-Length", strconv.Itoa(head.Len()+len(resp.Data)+tail.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(head.Bytes())
	if len(resp.Data) > 0 {
		_, _ = w.Write(resp.Data)
	}
	_, _ = w.Write(tail.Bytes())
}

// appendMember appends "name":v (v as encoding/json marshals it) to b when
// present.
func appendMember(b *bytes.Buffer, name string, v any, present bool) error {
	if !present {
		return nil
	}
	if b.Len() > 1 {
		b.WriteByte(',')
	}
	b.WriteString(`"` + name + `":`)
	enc := json.NewEncoder(b)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// buffers holds the small buffers of write (errors, extensions); one grown
// beyond maxPooled by a large error list or report is left to the collector.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooled = 64 << 10
