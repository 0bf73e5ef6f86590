package scalars

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/restclient"
)

func render(m graphql.Marshaler) string {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	return b.String()
}

func renderContext(t *testing.T, m graphql.ContextMarshaler) string {
	t.Helper()
	var b bytes.Buffer
	if err := m.MarshalGQLContext(t.Context(), &b); err != nil {
		t.Fatalf("MarshalGQLContext: %v", err)
	}
	return b.String()
}

func TestDateTime(t *testing.T) {
	if got := renderContext(t, MarshalDateTime(restclient.Timestamp{})); got != "null" {
		t.Errorf("zero Timestamp = %s, want null", got)
	}
	paris := time.FixedZone("CET", 3600)
	ts := restclient.Timestamp{Time: time.Date(2021, 5, 21, 11, 0, 0, 0, paris)}
	if got := renderContext(t, MarshalDateTime(ts)); got != `"2021-05-21T10:00:00Z"` {
		t.Errorf("marshal = %s, want UTC without fraction", got)
	}
	ts.Time = ts.Add(500 * time.Millisecond)
	if got := renderContext(t, MarshalDateTime(ts)); got != `"2021-05-21T10:00:00.5Z"` {
		t.Errorf("marshal = %s, want fractional seconds kept", got)
	}

	var bad restclient.Timestamp
	_ = json.Unmarshal([]byte(`"last tuesday"`), &bad)
	err := MarshalDateTime(bad).MarshalGQLContext(t.Context(), &bytes.Buffer{})
	var coded *gqlerr.Coded
	if !errors.As(err, &coded) || coded.Code != errcode.UpstreamInvalid || strings.Contains(coded.Message, "tuesday") {
		t.Errorf("unreadable Timestamp: %v, want UPSTREAM_INVALID without the value", err)
	}

	got, err := UnmarshalDateTime(t.Context(), "2021-05-21T12:00:00+02:00")
	if err != nil || !got.Equal(time.Date(2021, 5, 21, 10, 0, 0, 0, time.UTC)) || got.Location() != time.UTC {
		t.Errorf("unmarshal offset = %v, %v; want 10:00 UTC", got, err)
	}
	if got, err := UnmarshalDateTime(t.Context(), "2021-05-21T10:00:00.123Z"); err != nil || got.Nanosecond() != 123e6 {
		t.Errorf("unmarshal fraction = %v, %v", got, err)
	}
	for _, bad := range []any{"", "2021-05-21", "yesterday", 1621591200, nil} {
		if _, err := UnmarshalDateTime(t.Context(), bad); err == nil {
			t.Errorf("UnmarshalDateTime(%#v) accepted", bad)
		}
	}
}

func TestJSON(t *testing.T) {
	for raw, want := range map[string]string{
		``:                          "null",
		`null`:                      "null",
		`{"broken"`:                 "null",
		`{"url":"https://x","n":1}`: `{"url":"https://x","n":1}`,
		`[1,2]`:                     `[1,2]`,
	} {
		var m json.RawMessage
		if raw != "" {
			m = json.RawMessage(raw)
		}
		if got := render(MarshalJSON(m)); got != want {
			t.Errorf("MarshalJSON(%q) = %s, want %s", raw, got, want)
		}
	}
	got, err := UnmarshalJSON(map[string]any{"a": []any{1, "b"}})
	if err != nil || string(got) != `{"a":[1,"b"]}` {
		t.Errorf("UnmarshalJSON = %s, %v", got, err)
	}
	if _, err := UnmarshalJSON(func() {}); err == nil {
		t.Error("UnmarshalJSON accepted a value that has no JSON form")
	}
}

// TestDateTimeAnyWriter: a writer other than a *bytes.Buffer gets the same
// text.
func TestDateTimeAnyWriter(t *testing.T) {
	ts := restclient.Timestamp{Time: time.Date(2021, 5, 21, 10, 0, 0, 123456789, time.UTC)}
	var b strings.Builder
	if err := MarshalDateTime(ts).MarshalGQLContext(t.Context(), &b); err != nil || b.String() != `"2021-05-21T10:00:00.123456789Z"` {
		t.Errorf("got %s, %v", b.String(), err)
	}
}

// BenchmarkMarshalDateTime writes one DateTime as gqlgen's executor does.
func BenchmarkMarshalDateTime(b *testing.B) {
	ts := restclient.Timestamp{Time: time.Date(2021, 5, 21, 10, 0, 0, 500e6, time.UTC)}
	var buf bytes.Buffer
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := MarshalDateTime(ts).MarshalGQLContext(ctx, &buf); err != nil {
			b.Fatal(err)
		}
	}
}
