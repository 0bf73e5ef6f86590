package restserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/workspacenet/facade/internal/base/ids"
	"github.com/workspacenet/facade/restserver/wire"
)

// The helpers every handler shares: writing JSON, reading bodies, path and
// query parameters, and small value helpers.

type restTimestamp = wire.Timestamp

// maxBodyBytes caps request bodies; a larger body is a 400.
const maxBodyBytes = 1 << 20

// writeJSON writes v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var (
		b   []byte
		err error
	)
	if a, ok := v.(jsonAppender); ok { // stored documents as they are (docpage.go)
		b, err = a.appendJSON(nil)
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"message":"internal error","type":"internal"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// decodeBody reads a JSON body of the form {key: {...}} into dst (a pointer
// to a request struct). Unknown fields, a missing key, malformed JSON, wrong
// types and bodies over maxBodyBytes are 400s naming the field.
func decodeBody(r *http.Request, key string, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return invalidf("Content-Type: must be application/json")
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return invalidf("could not read the request body")
	}
	if len(body) > maxBodyBytes {
		return invalidf("request body exceeds %d bytes", maxBodyBytes)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalidf("body must be a JSON object {%q: {...}}", key)
		}
		return invalidf("malformed JSON body")
	}
	if env == nil {
		return invalidf("body must be a JSON object {%q: {...}}", key)
	}
	for k := range env {
		if k != key {
			return invalidf("%s: unknown field", k)
		}
	}
	raw, ok := env[key]
	if !ok || string(raw) == "null" {
		return invalidf("%s: is required", key)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fieldError(key, raw, dst, err)
	}
	return strictTimestamps(key, raw, dst)
}

// strictTimestamps holds the timestamps of a request body to RFC 3339.
// wire.Timestamp decodes leniently (ISO 8601 forms, and an unreadable
// value is kept rather than refused), as a client of an upstream should; as
// an upstream, this service accepts RFC 3339 only: anything else is a 400
// naming the field.
func strictTimestamps(key string, raw json.RawMessage, dst any) error {
	t := reflect.TypeOf(dst).Elem()
	var fields map[string]json.RawMessage
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type != reflect.TypeFor[*restTimestamp]() {
			continue
		}
		if fields == nil {
			if json.Unmarshal(raw, &fields) != nil {
				return invalidf("%s: must be a JSON object", key)
			}
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		v, ok := fields[name]
		if !ok || string(v) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil || s != "" && !isRFC3339(s) {
			return invalidf("%s.%s: must be an RFC 3339 timestamp", key, name)
		}
	}
	return nil
}

func isRFC3339(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// fieldError turns a decoding error of the object under key into a 400 that
// names the offending field.
func fieldError(key string, raw json.RawMessage, dst any, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return invalidf("%s: must be a JSON object", key)
		}
		return invalidf("%s.%s: must be a JSON %s", key, te.Field, te.Type.Kind().String())
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return invalidf("%s.%s: unknown field", key, strings.Trim(msg, `"`))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return invalidf("malformed JSON body")
	}
	// A field's own UnmarshalJSON failed (a timestamp): find which one.
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil {
		t := reflect.TypeOf(dst).Elem()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			v, ok := fields[name]
			if !ok {
				continue
			}
			if json.Unmarshal(v, reflect.New(f.Type).Interface()) != nil {
				if f.Type == reflect.TypeFor[*restTimestamp]() {
					return invalidf("%s.%s: must be an RFC 3339 timestamp", key, name)
				}
				return invalidf("%s.%s: invalid value", key, name)
			}
		}
	}
	return invalidf("%s: invalid value", key)
}

// pathID reads the uuid path parameter name; a malformed one is a 400.
func pathID(r *http.Request, name string) (string, error) {
	v := r.PathValue(name)
	if !ids.IsUUID(v) {
		return "", invalidf("%s: must be a uuid", name)
	}
	return strings.ToLower(v), nil
}

// refParam validates a required uuid reference of a request body.
func refParam(v *string, field string) (string, error) {
	if v == nil || *v == "" {
		return "", invalidf("%s: is required", field)
	}
	if !ids.IsUUID(*v) {
		return "", invalidf("%s: must be a uuid", field)
	}
	return strings.ToLower(*v), nil
}

// Page sizes.
const (
	defaultLimit = 25
	maxLimit     = 100
)

// limitParam reads the "limit" query parameter. With coerce (credit notes,
// orders) a missing or invalid value is 25 and a value above 100 is 100;
// without (transactions, redemptions) anything but an integer 1..100 is a
// 400. A missing limit is 25 in both cases.
func limitParam(q url.Values, coerce bool) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(v)
	switch {
	case coerce && (err != nil || n < 1):
		return defaultLimit, nil
	case coerce && n > maxLimit:
		return maxLimit, nil
	case err != nil || n < 1 || n > maxLimit:
		return 0, invalidf("limit: must be an integer from 1 to 100")
	}
	return n, nil
}

// uuidParam reads an optional uuid query parameter, lowercased.
func uuidParam(q url.Values, name string) (string, error) {
	v := q.Get(name)
	if v == "" {
		return "", nil
	}
	if !ids.IsUUID(v) {
		return "", invalidf("%s: must be a uuid", name)
	}
	return strings.ToLower(v), nil
}

// requiredUUIDParam is uuidParam for a parameter the operation requires.
func requiredUUIDParam(q url.Values, name string) (string, error) {
	v, err := uuidParam(q, name)
	if err == nil && v == "" {
		err = invalidf("%s: is required", name)
	}
	return v, err
}

// enumParam reads an optional query parameter that must be one of values.
func enumParam(q map[string][]string, name string, values []string) (string, error) {
	v := ""
	if vs := q[name]; len(vs) > 0 {
		v = vs[0]
		if len(vs) > 1 {
			return "", invalidf("%s: give one value", name)
		}
	}
	if v != "" && !slices.Contains(values, v) {
		return "", invalidf("%s: must be one of %s", name, strings.Join(values, ", "))
	}
	return v, nil
}

// dateRangeParam reads name[gte] and name[lte] (RFC 3339, both inclusive)
// into a dateRange, and records them in filters as canonical values (for
// page tokens); lte before gte is a 400.
func dateRangeParam(q url.Values, name string, filters map[string]string) (dateRange, error) {
	var r dateRange
	for _, op := range []string{"gte", "lte"} {
		key := name + "[" + op + "]"
		v := q.Get(key)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return dateRange{}, invalidf("%s: must be an RFC 3339 timestamp", key)
		}
		bound := t.UnixMicro()
		filters[key] = strconv.FormatInt(bound, 10)
		if op == "gte" {
			r.gte = &bound
		} else {
			r.lte = &bound
		}
	}
	if r.gte != nil && r.lte != nil && *r.gte > *r.lte {
		return dateRange{}, invalidf("%s[lte]: must not be before %s[gte]", name, name)
	}
	return r, nil
}

// maxLen checks an optional string's length.
func maxLen(v *string, n int, field string) error {
	if v != nil && len(*v) > n {
		return invalidf("%s: at most %d characters", field, n)
	}
	return nil
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// round2 rounds an amount to cents.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
