package leaf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/graph/leaf"
	"github.com/workspacenet/facade/graph/scalars"
	"github.com/workspacenet/facade/restclient"
)

// written is what m writes into a bytes.Buffer (gqlgen's executor's writer)
// and into a writer that is not one: both must be the same.
func written(t *testing.T, m graphql.Marshaler) string {
	t.Helper()
	var b bytes.Buffer
	m.MarshalGQL(&b)
	var o strings.Builder
	m.MarshalGQL(&o)
	if o.String() != b.String() {
		t.Fatalf("a *bytes.Buffer got %q, another writer %q", b.String(), o.String())
	}
	return b.String()
}

// gqlgen is what gqlgen's marshaler m writes (a ContextMarshaler's error
// fails the test).
func gqlgen(t *testing.T, m any) string {
	t.Helper()
	var b bytes.Buffer
	switch m := m.(type) {
	case graphql.Marshaler:
		m.MarshalGQL(&b)
	case graphql.ContextMarshaler:
		if err := m.MarshalGQLContext(context.Background(), &b); err != nil {
			t.Fatalf("gqlgen's marshaler: %v", err)
		}
	}
	return b.String()
}

func TestStringAsGqlgen(t *testing.T) {
	cases := []string{"", "plain", `quote " backslash \ slash /`, "tab\tcr\rnl\n", "\x00\x01\x08\x0c\x1f\x7f",
		"é ü 日本 🙂", "bad utf8 \xff\xfe \xc3", "<script>&amp;</script>", "\u2028\u2029"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := written(t, leaf.String(&s)), gqlgen(t, graphql.MarshalString(s)); got != want {
			t.Fatalf("String(%q) = %s, gqlgen %s", s, got, want)
		}
		if got, want := written(t, leaf.String(&s)), gqlgen(t, graphql.MarshalID(s)); got != want {
			t.Fatalf("ID %q = %s, gqlgen %s", s, got, want)
		}
	}
	if leaf.String(nil) != graphql.Null {
		t.Error("String(nil) is not graphql.Null")
	}
}

func TestFloatAsGqlgen(t *testing.T) {
	cases := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 12.34, 100, 1e6, 1e20, 1e21, 1e-4, 1e-5, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -math.MaxFloat64, 2.2250738585072014e-308, float64(1 << 53), 0.30000000000000004}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		cases = append(cases, math.Float64frombits(r.Uint64()), r.NormFloat64()*1e6, math.Round(r.Float64()*1e6)/100)
	}
	for _, f := range cases {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			if leaf.Float(&f) != nil {
				t.Fatalf("Float(%v) is not nil (gqlgen's path reports it)", f)
			}
			continue
		}
		if got, want := written(t, leaf.Float(&f)), gqlgen(t, graphql.MarshalFloatContext(f)); got != want {
			t.Fatalf("Float(%v) = %s, gqlgen %s", f, got, want)
		}
	}
	for _, f := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		if leaf.Float(&f) != nil {
			t.Errorf("Float(%v) is not nil", f)
		}
	}
	if leaf.Float(nil) != graphql.Null {
		t.Error("Float(nil) is not graphql.Null")
	}
}

func TestIntBooleanAsGqlgen(t *testing.T) {
	for _, i := range []int{0, 1, -1, 42, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
		if got, want := written(t, leaf.Int(&i)), gqlgen(t, scalars.MarshalInt(i)); got != want {
			t.Errorf("Int(%d) = %s, gqlgen %s", i, got, want)
		}
	}
	for _, b := range []bool{true, false} {
		if got, want := written(t, leaf.Boolean(&b)), gqlgen(t, graphql.MarshalBoolean(b)); got != want {
			t.Errorf("Boolean(%t) = %s, gqlgen %s", b, got, want)
		}
	}
	if leaf.Int(nil) != graphql.Null || leaf.Boolean(nil) != graphql.Null {
		t.Error("Int(nil) or Boolean(nil) is not graphql.Null")
	}
}

func TestDateTimeAsScalars(t *testing.T) {
	paris := time.FixedZone("Paris", 2*3600)
	for _, ts := range []restclient.Timestamp{
		{},
		{Time: time.Date(2021, 5, 21, 10, 0, 0, 0, time.UTC)},
		{Time: time.Date(2021, 5, 21, 10, 0, 0, 120_000_000, time.UTC)},
		{Time: time.Date(2021, 5, 21, 12, 0, 0, 1, paris)},
		{Time: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
		{Time: time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)},
	} {
		if got, want := written(t, leaf.DateTime(&ts)), gqlgen(t, scalars.MarshalDateTime(ts)); got != want {
			t.Errorf("DateTime(%v) = %s, scalars %s", ts.Time, got, want)
		}
	}
	var bad restclient.Timestamp
	if err := json.Unmarshal([]byte(`"not a date"`), &bad); err != nil || bad.Err() == nil {
		t.Fatalf("an unreadable Timestamp: %v, %v", err, bad.Err())
	}
	if leaf.DateTime(&bad) != nil {
		t.Error("DateTime of an unreadable Timestamp is not nil (scalars reports it)")
	}
	if leaf.DateTime(nil) != graphql.Null {
		t.Error("DateTime(nil) is not graphql.Null")
	}
}

func TestJSONAsScalars(t *testing.T) {
	for _, s := range []string{"", "null", `{"a":1}`, `[1, 2]`, `"x"`, `{bad`, ` {"a" : [true]} `, "3"} {
		m := json.RawMessage(s)
		if s == "" {
			m = nil
		}
		want := scalars.MarshalJSON(m)
		got := leaf.JSON(&m)
		if (want == graphql.Null) != (got == graphql.Null) {
			t.Errorf("JSON(%q): null %t, scalars %t", s, got == graphql.Null, want == graphql.Null)
			continue
		}
		if got != graphql.Null && written(t, got) != gqlgen(t, want) {
			t.Errorf("JSON(%q) = %s, scalars %s", s, written(t, got), gqlgen(t, want))
		}
	}
	if leaf.JSON(nil) != graphql.Null {
		t.Error("JSON(nil) is not graphql.Null")
	}
}

func TestEnum(t *testing.T) {
	names := map[restclient.TransactionStatus]string{restclient.TransactionStatusPending: "PENDING", restclient.TransactionStatusFailed: "FAILED"}
	e := leaf.NewEnum(names)
	for _, v := range []restclient.TransactionStatus{restclient.TransactionStatusPending, restclient.TransactionStatusFailed, "other", ""} {
		if got, want := written(t, e.Of(&v)), gqlgen(t, graphql.MarshalString(names[v])); got != want {
			t.Errorf("Of(%q) = %s, gqlgen %s", v, got, want)
		}
	}
	if e.Of(nil) != graphql.Null {
		t.Error("Of(nil) is not graphql.Null")
	}
}

// TestNoAllocation: a leaf's Marshaler, made and written into a
// *bytes.Buffer with room, allocates nothing.
func TestNoAllocation(t *testing.T) {
	s, f, i, b := "a \"quoted\"\tvalue", 12.5, 42, true
	ts := restclient.Timestamp{Time: time.Date(2021, 5, 21, 10, 0, 0, 120_000_000, time.UTC)}
	js := json.RawMessage(`{"a":1}`)
	st := restclient.TransactionStatusPending
	e := leaf.NewEnum(map[restclient.TransactionStatus]string{st: "PENDING"})
	var buf bytes.Buffer
	buf.Grow(4096)
	n := testing.AllocsPerRun(100, func() {
		buf.Reset()
		for _, m := range []graphql.Marshaler{leaf.String(&s), leaf.Float(&f), leaf.Int(&i), leaf.Boolean(&b), leaf.DateTime(&ts), leaf.JSON(&js), e.Of(&st)} {
			m.MarshalGQL(&buf)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

func TestEnabled(t *testing.T) {
	if leaf.Enabled(nil) || leaf.Enabled(struct{}{}) || leaf.Enabled(root(false)) || !leaf.Enabled(root(true)) {
		t.Error("Enabled is true only for a Root that says so")
	}
}

type root bool

func (r root) PlainFields() bool { return bool(r) }

func BenchmarkString(b *testing.B) {
	s := "Meeting room 3, 2nd floor"
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		leaf.String(&s).MarshalGQL(&buf)
	}
}

func BenchmarkStringGqlgen(b *testing.B) {
	s := "Meeting room 3, 2nd floor"
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		graphql.MarshalString(s).MarshalGQL(&buf)
	}
}

func BenchmarkFloat(b *testing.B) {
	f := 1234.56
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		leaf.Float(&f).MarshalGQL(&buf)
	}
}

func BenchmarkFloatGqlgen(b *testing.B) {
	f := 1234.56
	var buf bytes.Buffer
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		graphql.WrapContextMarshaler(ctx, graphql.MarshalFloatContext(f)).MarshalGQL(&buf)
	}
}
