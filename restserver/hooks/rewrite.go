package hooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// Rewrite is what a "rewrite" fault changes in a 2xx JSON answer: in each
// record of the answer whose id is ID (every record when ID is empty), each
// field of Set takes its value (added when the record lacks it). The records
// of an answer are the objects under its top-level keys and the objects of
// the arrays under them: the resource of {"resource": {...}}, each order of
// {"orders": [...], "nextPageToken": "..."}. Set's values are encoded as
// JSON ("onHold" a string, nil null).
type Rewrite struct {
	ID  string
	Set map[string]any
}

// rewriting returns next with its answers rewritten by rw: the answer is
// buffered, and a 2xx JSON object with a record rw selects is sent changed
// (X-Injected-Fault: rewrite, a new Content-Length) and counted as injected
// under route; any other answer is sent as it came.
func (h *Hooks) rewriting(route string, rw *Rewrite, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := &bufferedAnswer{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(buf, r)
		body := buf.body.Bytes()
		if buf.status >= 200 && buf.status < 300 {
			if changed, ok := rw.apply(body); ok {
				body = changed
				buf.header.Set(FaultHeader, string(FaultRewrite))
				h.countInjected(route, FaultRewrite)
			}
		}
		for k, v := range buf.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(buf.status)
		_, _ = w.Write(body)
	})
}

// apply returns body with rw applied and true, or false when rw is nil,
// body is not a JSON object, no record is selected, or a value of Set
// cannot be encoded.
func (rw *Rewrite) apply(body []byte) ([]byte, bool) {
	if rw == nil || len(rw.Set) == 0 {
		return nil, false
	}
	set := make(map[string]json.RawMessage, len(rw.Set))
	for k, v := range rw.Set {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		set[k] = b
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil || doc == nil {
		return nil, false
	}
	changed := false
	for key, v := range doc {
		switch firstByte(v) {
		case '{':
			if rec, ok := rw.record(v, set); ok {
				doc[key], changed = rec, true
			}
		case '[':
			var items []json.RawMessage
			if json.Unmarshal(v, &items) != nil {
				continue
			}
			hit := false
			for i, item := range items {
				if rec, ok := rw.record(item, set); ok {
					items[i], hit = rec, true
				}
			}
			if hit {
				doc[key], _ = json.Marshal(items)
				changed = true
			}
		}
	}
	if !changed {
		return nil, false
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, false
	}
	return append(out, '\n'), true
}

// record returns the object raw with set applied, if rw selects it.
func (rw *Rewrite) record(raw json.RawMessage, set map[string]json.RawMessage) (json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if firstByte(raw) != '{' || json.Unmarshal(raw, &obj) != nil {
		return nil, false
	}
	if rw.ID != "" {
		var id string
		if json.Unmarshal(obj["id"], &id) != nil || id != rw.ID {
			return nil, false
		}
	}
	for k, v := range set {
		obj[k] = v
	}
	out, err := json.Marshal(obj)
	return out, err == nil
}

// firstByte is the first byte of a JSON value that is not white space (0
// for none).
func firstByte(v []byte) byte {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// bufferedAnswer is an http.ResponseWriter that keeps the answer.
type bufferedAnswer struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (b *bufferedAnswer) Header() http.Header { return b.header }

func (b *bufferedAnswer) WriteHeader(status int) {
	if !b.wrote {
		b.status, b.wrote = status, true
	}
}

func (b *bufferedAnswer) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}
