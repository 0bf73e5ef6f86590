package livequery

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Op is one operation of a JSON Patch (RFC 6902).
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Diff returns the JSON Patch that turns the JSON document a into b (both
// valid JSON): objects are compared member by member, arrays element by
// element with the tail added or removed, anything else replaced whole.
func Diff(a, b []byte) ([]Op, error) {
	var x, y any
	if err := decode(a, &x); err != nil {
		return nil, err
	}
	if err := decode(b, &y); err != nil {
		return nil, err
	}
	var ops []Op
	diff("", x, y, &ops)
	return ops, nil
}

func decode(b []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

func diff(path string, x, y any, ops *[]Op) {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(xv))
		for k := range xv {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if yk, ok := yv[k]; ok {
				diff(path+"/"+escape(k), xv[k], yk, ops)
			} else {
				*ops = append(*ops, Op{Op: "remove", Path: path + "/" + escape(k)})
			}
		}
		added := make([]string, 0)
		for k := range yv {
			if _, ok := xv[k]; !ok {
				added = append(added, k)
			}
		}
		slices.Sort(added)
		for _, k := range added {
			*ops = append(*ops, Op{Op: "add", Path: path + "/" + escape(k), Value: jsonValue(yv[k])})
		}
		return
	case []any:
		yv, ok := y.([]any)
		if !ok {
			break
		}
		n := min(len(xv), len(yv))
		for i := range n {
			diff(path+"/"+strconv.Itoa(i), xv[i], yv[i], ops)
		}
		for i := len(xv) - 1; i >= n; i-- {
			*ops = append(*ops, Op{Op: "remove", Path: path + "/" + strconv.Itoa(i)})
		}
		for i := n; i < len(yv); i++ {
			*ops = append(*ops, Op{Op: "add", Path: path + "/" + strconv.Itoa(i), Value: jsonValue(yv[i])})
		}
		return
	default:
		if equalScalar(x, y) {
			return
		}
	}
	*ops = append(*ops, Op{Op: "replace", Path: path, Value: jsonValue(y)})
}

// jsonValue keeps null as null in an op's value (omitempty drops nil).
func jsonValue(v any) any {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

func equalScalar(x, y any) bool {
	switch xv := x.(type) {
	case nil:
		return y == nil
	case json.Number:
		yv, ok := y.(json.Number)
		return ok && xv == yv
	case string:
		yv, ok := y.(string)
		return ok && xv == yv
	case bool:
		yv, ok := y.(bool)
		return ok && xv == yv
	}
	return false
}

// escape is k as a JSON Pointer reference token (RFC 6901).
func escape(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// resultKey is the member of a response's extensions that carries what
// Lift moves to the top level of the response: the live query's revision
// and, after the first result, its patch.
const resultKey = "liveResult"

var resultMarker = []byte(`"` + resultKey + `":`)

// liftable is the value of extensions.liveResult.
type liftable struct {
	Revision int             `json:"revision"`
	Patch    json.RawMessage `json:"patch,omitempty"`
}

// Lift returns the JSON of a GraphQL response as the graphql-live-query
// convention shapes a live query's results: what the response's
// extensions.liveResult says goes to the top level (`revision`, and for an
// update `patch` in place of `data`). Any other response is returned as it
// is. The transports write every response through it.
func Lift(payload []byte) []byte {
	if !bytes.Contains(payload, resultMarker) {
		return payload
	}
	var resp map[string]json.RawMessage
	if json.Unmarshal(payload, &resp) != nil {
		return payload
	}
	var ext map[string]json.RawMessage
	if json.Unmarshal(resp["extensions"], &ext) != nil || ext[resultKey] == nil {
		return payload
	}
	var l liftable
	if json.Unmarshal(ext[resultKey], &l) != nil {
		return payload
	}
	delete(ext, resultKey)
	if len(ext) == 0 {
		delete(resp, "extensions")
	} else {
		resp["extensions"], _ = json.Marshal(ext)
	}
	resp["revision"] = json.RawMessage(strconv.Itoa(l.Revision))
	if l.Patch != nil {
		delete(resp, "data")
		resp["patch"] = l.Patch
	}
	out, err := json.Marshal(resp)
	if err != nil {
		return payload
	}
	return out
}

// LiftFrame is Lift for a WebSocket message v (an envelope whose payload
// is a response), returned as the JSON to write.
func LiftFrame(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil || !bytes.Contains(b, resultMarker) {
		return b, err
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(b, &env) != nil || env["payload"] == nil {
		return b, nil
	}
	env["payload"] = Lift(env["payload"])
	return json.Marshal(env)
}
