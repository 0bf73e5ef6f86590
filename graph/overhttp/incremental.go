package overhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/gqlerr"
)

// Format is an incremental delivery format (@defer): the payloads of a
// response delivered in parts.
type Format int

const (
	// NotIncremental: the client accepts no incremental format; an operation
	// with @defer is answered whole, in one ordinary response.
	NotIncremental Format = iota
	// Defer20220824 is the format of deferSpec=20220824 (graphql-js
	// 17.0.0-alpha.2, Apollo Router, Apollo Client's Defer20220824Handler):
	// subsequent payloads carry "incremental" entries with their "path" and
	// "label".
	Defer20220824
	// IncrementalV02 is the format of incrementalSpec=v0.2 (graphql-js
	// 17.0.0-alpha.9, Apollo Client's GraphQL17Alpha9Handler): "pending"
	// entries with ids, "incremental" entries naming their id, "completed".
	IncrementalV02
)

// Incremental is what a request's Accept header admits for a response in
// parts: the format, and whether over Server-Sent Events rather than
// multipart/mixed.
type Incremental struct {
	Format Format
	SSE    bool
}

// AcceptsIncremental returns the incremental delivery h's Accept header
// admits, from its media ranges of multipart/mixed and text/event-stream
// (SSE) with a quality above 0 (wildcards admit none): the one of the
// highest quality, a range that names its format (incrementalSpec=v0.2:
// IncrementalV02; deferSpec=20220824: Defer20220824) over one without
// (Defer20220824, what gqlgen and Apollo Router answer; Apollo Client's
// GraphQL17Alpha9Handler adds a bare multipart/mixed before the client's
// own Accept), then the first. A range naming another spec version is
// skipped. NotIncremental when none, or when a JSON media type has a
// higher quality (Negotiate's: `application/json, multipart/mixed;q=0.5`
// asks for one JSON response).
func AcceptsIncremental(h http.Header) Incremental {
	var (
		best  Incremental
		bestQ float64
		named bool
	)
	for _, v := range h.Values("Accept") {
		if !strings.Contains(v, "multipart/mixed") && !strings.Contains(v, "text/event-stream") {
			continue // the common case: no media range to parse
		}
		for part := range strings.SplitSeq(v, ",") {
			m, q, isNamed, ok := incrementalRange(part)
			if ok && (q > bestQ || q == bestQ && isNamed && !named) {
				best, bestQ, named = m, q, isNamed
			}
		}
	}
	if bestQ == 0 || jsonQuality(strings.Join(h.Values("Accept"), ",")) > bestQ {
		return Incremental{}
	}
	return best
}

// incrementalRange reads one media range of an Accept header: the
// incremental format it asks for, its quality and whether it names its
// format; ok is false for a range that is not an incremental one we
// deliver (another media type or spec version, a bad quality).
func incrementalRange(r string) (m Incremental, q float64, named, ok bool) {
	mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
	if err != nil || (mt != "multipart/mixed" && mt != "text/event-stream") {
		return m, 0, false, false
	}
	q = 1.0
	if v, has := params["q"]; has {
		if q, err = strconv.ParseFloat(v, 64); err != nil || q <= 0 || q > 1 {
			return m, 0, false, false
		}
	}
	m = Incremental{Format: Defer20220824, SSE: mt == "text/event-stream"}
	inc, hasInc := params["incrementalspec"]
	def, hasDef := params["deferspec"]
	switch {
	case hasInc && inc == "v0.2":
		m.Format = IncrementalV02
	case hasDef && def == "20220824" && !hasInc:
	case !hasInc && !hasDef:
	default:
		return m, 0, false, false // another version
	}
	return m, q, hasInc || hasDef, true
}

// Part is what a payload of a response in parts says, in the
// incrementalSpec=v0.2 format, besides its data: the parts it announces
// (pending), the part its data belongs to, and the parts it completes. The
// operation gives it with the payload (Annotate); without one, a payload
// announces, delivers and completes its own part at once.
type Part struct {
	// Pending: the parts this payload announces (the initial payload: all
	// those known when the initial result is complete; a later one: those
	// its data makes known).
	Pending []Pending
	// ID: the part whose data (or @stream items) this payload carries.
	ID string
	// Completes: the payload ends part ID (with its errors when its data
	// is null: it failed as a whole).
	Completes bool
	// Completed: other parts that end with this payload without more data,
	// each with CompletedErrors when it has failed as a whole.
	Completed       []string
	CompletedErrors gqlerror.List
}

// Pending is a part announced before its data: its id, the path its data
// goes to (a @stream's: its list) and its label.
type Pending struct {
	ID    string
	Path  ast.Path
	Label string
}

// Annotate gives the Part of resp, a payload of the operation of ctx's
// request that its response handler is about to return.
func Annotate(ctx context.Context, resp *graphql.Response, p Part) {
	req, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		return
	}
	req.partMu.Lock()
	req.partResp, req.part = resp, p
	req.partMu.Unlock()
}

// partOf returns the Part Annotate gave resp, nil when none.
func partOf(ctx context.Context, resp *graphql.Response) *Part {
	req, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		return nil
	}
	req.partMu.Lock()
	defer req.partMu.Unlock()
	if req.partResp != resp {
		return nil
	}
	p := req.part
	return &p
}

// boundary of the multipart/mixed responses: the body starts with
// "\r\n---\r\n", each part ends with "\r\n---\r\n", the last with
// "\r\n-----\r\n".
const boundary = "-"

// HasNext reports whether resp says more payloads follow.
func HasNext(resp *graphql.Response) bool { return resp.HasNext != nil && *resp.HasNext }

// stream writes the response of an operation whose execution continues after
// its first payload (first.HasNext): first, then each response next returns,
// until one without HasNext, as payloads of m's format over multipart/mixed
// or Server-Sent Events, each flushed as it is written and within
// WriteTimeout of being ready. Subsequent responses are deferred parts:
// Path and Label name where their data goes (an object: @defer's fields; an
// array: @stream's later items, Path ending with the first one's index); one
// without Data and Path only ends the stream.
func (t Transport) stream(ctx context.Context, w http.ResponseWriter, m Incremental, first *graphql.Response, next graphql.ResponseHandler) {
	rc := http.NewResponseController(w)
	h := w.Header()
	spec := "deferSpec=20220824"
	if m.Format == IncrementalV02 {
		spec = "incrementalSpec=v0.2"
	}
	if m.SSE {
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
	} else {
		h.Set("Content-Type", `multipart/mixed; boundary="`+boundary+`"; `+spec)
	}
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // no proxy buffering of the parts
	enc := payloads{format: m.Format}
	var buf bytes.Buffer
	resp := first
	for i := 0; resp != nil; i++ {
		buf.Reset()
		if m.SSE {
			buf.WriteString("event: next\ndata: ")
		} else {
			if i == 0 {
				buf.WriteString("\r\n--" + boundary + "\r\n")
			}
			buf.WriteString("Content-Type: application/json; charset=utf-8\r\n\r\n")
		}
		if pos := buf.Len(); enc.write(&buf, resp, i == 0, partOf(ctx, resp)) != nil {
			buf.Truncate(pos)
			enc.writeInternal(&buf)
			resp.HasNext = nil
		}
		more := HasNext(resp)
		switch {
		case m.SSE && more:
			buf.WriteString("\n\n")
		case m.SSE:
			buf.WriteString("\n\nevent: complete\ndata: \n\n")
		case more:
			// The delimiter and its line end with the part: a reader knows
			// the part has ended without waiting for the next.
			buf.WriteString("\r\n--" + boundary + "\r\n")
		default:
			buf.WriteString("\r\n--" + boundary + "--\r\n")
		}
		if t.WriteTimeout > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(t.WriteTimeout))
		}
		if i == 0 {
			w.WriteHeader(http.StatusOK)
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		if !more {
			return
		}
		resp = next(ctx)
	}
}

// payloads encodes the payloads of one response in parts.
type payloads struct {
	format Format
	ids    int // IncrementalV02: the ids given so far
}

// write appends resp's payload to b: the first payload (initial) or a
// subsequent one, in the format of p; part is what the operation says of it
// for IncrementalV02 (nil: the payload's part is announced, delivered and
// completed at once).
func (p *payloads) write(b *bytes.Buffer, resp *graphql.Response, initial bool, part *Part) error {
	b.WriteByte('{')
	start := b.Len()
	var err error
	switch {
	case initial:
		err = p.writeInitial(b, resp, part)
	case p.format == IncrementalV02 && part != nil:
		err = writeV02(b, resp, part)
	case len(resp.Data) == 0 && resp.Path == nil:
		// The end of the stream alone: {"hasNext":false}.
	case p.format == Defer20220824:
		err = writeDefer20220824(b, resp)
	default: // IncrementalV02: the part is announced, delivered and completed at once
		err = p.writeWholePart(b, resp)
	}
	if err != nil {
		return err
	}
	if b.Len() > start {
		b.WriteByte(',')
	}
	b.WriteString(`"hasNext":` + strconv.FormatBool(HasNext(resp)))
	if len(resp.Extensions) > 0 {
		b.WriteString(`,"extensions":`)
		if err := encode(b, resp.Extensions); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// writeInitial writes the members of the initial payload: its errors, its
// data and (IncrementalV02) the parts it announces.
func (p *payloads) writeInitial(b *bytes.Buffer, resp *graphql.Response, part *Part) error {
	if len(resp.Errors) > 0 {
		b.WriteString(`"errors":`)
		if err := encode(b, resp.Errors); err != nil {
			return err
		}
		b.WriteByte(',')
	}
	b.WriteString(`"data":`)
	b.Write(orNull(resp.Data))
	if p.format != IncrementalV02 {
		return nil
	}
	b.WriteString(`,"pending":`)
	var pending []Pending
	if part != nil {
		pending = part.Pending
	}
	return writePending(b, pending)
}

// writeDefer20220824 writes the members of a later payload in the
// deferSpec=20220824 format: one incremental entry.
func writeDefer20220824(b *bytes.Buffer, resp *graphql.Response) error {
	b.WriteString(`"incremental":[{`)
	if len(resp.Errors) > 0 {
		b.WriteString(`"errors":`)
		if err := encode(b, resp.Errors); err != nil {
			return err
		}
		b.WriteByte(',')
	}
	if items(resp) {
		b.WriteString(`"items":`)
	} else {
		b.WriteString(`"data":`)
	}
	b.Write(orNull(resp.Data))
	b.WriteString(`,"path":`)
	if err := encode(b, pathOf(resp)); err != nil {
		return err
	}
	if err := writeLabel(b, resp.Label); err != nil {
		return err
	}
	b.WriteString(`}]`)
	return nil
}

// writeWholePart writes the members of a later payload in the
// IncrementalV02 format whose part the operation did not describe: the part
// is announced, delivered and completed at once.
func (p *payloads) writeWholePart(b *bytes.Buffer, resp *graphql.Response) error {
	id := strconv.Quote(strconv.Itoa(p.ids))
	p.ids++
	b.WriteString(`"pending":[{"id":` + id + `,"path":`)
	path := pathOf(resp)
	if items(resp) {
		path = resp.Path[:len(resp.Path)-1] // a stream's path is its list's
	}
	if err := encode(b, path); err != nil {
		return err
	}
	if err := writeLabel(b, resp.Label); err != nil {
		return err
	}
	b.WriteString(`}]`)
	if null := len(resp.Data) == 0 || string(resp.Data) == "null"; null {
		// A part whose data is null (a non-null field of it failed) is
		// completed with its errors and delivers nothing.
		b.WriteString(`,"completed":[{"id":` + id)
		if len(resp.Errors) > 0 {
			b.WriteString(`,"errors":`)
			if err := encode(b, resp.Errors); err != nil {
				return err
			}
		}
		b.WriteString(`}]`)
		return nil
	}
	b.WriteString(`,"incremental":[{"id":` + id)
	if err := writeIncrementalEntry(b, resp); err != nil {
		return err
	}
	b.WriteString(`}],"completed":[{"id":` + id + `}]`)
	return nil
}

// writeLabel writes `,"label":` and label, when it is not empty.
func writeLabel(b *bytes.Buffer, label string) error {
	if label == "" {
		return nil
	}
	b.WriteString(`,"label":`)
	return encode(b, label)
}

// writePending appends the pending entries ps as a JSON array.
func writePending(b *bytes.Buffer, ps []Pending) error {
	b.WriteByte('[')
	for i, pe := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":` + strconv.Quote(pe.ID) + `,"path":`)
		var path any = pe.Path
		if pe.Path == nil {
			path = []any{}
		}
		if err := encode(b, path); err != nil {
			return err
		}
		if pe.Label != "" {
			b.WriteString(`,"label":`)
			if err := encode(b, pe.Label); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return nil
}

// writeV02 appends the members of a subsequent IncrementalV02 payload but
// hasNext and extensions: its pending, incremental and completed entries, as
// part says. Each part's data goes to its pending path (no subPath: the
// parts are announced at the path of the object, or list, they complete).
func writeV02(b *bytes.Buffer, resp *graphql.Response, part *Part) error {
	comma := false
	sep := func() {
		if comma {
			b.WriteByte(',')
		}
		comma = true
	}
	if len(part.Pending) > 0 {
		sep()
		b.WriteString(`"pending":`)
		if err := writePending(b, part.Pending); err != nil {
			return err
		}
	}
	id := strconv.Quote(part.ID)
	delivers := part.ID != "" && (len(resp.Data) > 0 || resp.Path != nil)
	failed := delivers && (len(resp.Data) == 0 || string(resp.Data) == "null")
	if delivers && !failed {
		sep()
		b.WriteString(`"incremental":[{"id":` + id)
		if err := writeIncrementalEntry(b, resp); err != nil {
			return err
		}
		b.WriteString(`}]`)
	}
	if !part.Completes && !failed && len(part.Completed) == 0 {
		return nil
	}
	sep()
	b.WriteString(`"completed":[`)
	n := 0
	if part.Completes || failed {
		// A part whose data is null (a non-null field of it failed, or
		// the part was refused) is completed with its errors.
		b.WriteString(`{"id":` + id)
		if failed && len(resp.Errors) > 0 {
			b.WriteString(`,"errors":`)
			if err := encode(b, resp.Errors); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		n++
	}
	for _, c := range part.Completed {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":` + strconv.Quote(c))
		if len(part.CompletedErrors) > 0 {
			b.WriteString(`,"errors":`)
			if err := encode(b, part.CompletedErrors); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		n++
	}
	b.WriteByte(']')
	return nil
}

// writeInternal replaces a payload that could not be encoded: an internal
// error, and the end of the stream.
func (p *payloads) writeInternal(b *bytes.Buffer) {
	b.WriteString(`{"errors":`)
	b.Write(gqlerr.InternalErrors)
	b.WriteString(`,"hasNext":false}`)
}

// items reports whether resp is a @stream part: the later items of a list
// (a JSON array; a @defer part's data is an object), at the path of the
// first of them.
func items(resp *graphql.Response) bool {
	return len(resp.Data) > 0 && resp.Data[0] == '[' && len(resp.Path) > 0
}

func pathOf(resp *graphql.Response) any {
	if resp.Path == nil {
		return []any{}
	}
	return resp.Path
}

func orNull(data []byte) []byte {
	if len(data) == 0 {
		return []byte("null")
	}
	return data
}

// encode appends v as encoding/json marshals it, without its newline.
func encode(b *bytes.Buffer, v any) error {
	if err := json.NewEncoder(b).Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1)
	return nil
}

// writeIncrementalEntry writes the members of an incremental entry after
// its id: the part's errors, then its items (a stream's) or data.
func writeIncrementalEntry(b *bytes.Buffer, resp *graphql.Response) error {
	if len(resp.Errors) > 0 {
		b.WriteString(`,"errors":`)
		if err := encode(b, resp.Errors); err != nil {
			return err
		}
	}
	if items(resp) {
		b.WriteString(`,"items":`)
	} else {
		b.WriteString(`,"data":`)
	}
	b.Write(resp.Data)
	return nil
}
