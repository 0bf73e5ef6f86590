package restclient

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestTimestampReadsISO8601Leniently(t *testing.T) {
	at := func(y, mo, d, h, mi, s, ns int) time.Time {
		return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC)
	}
	for in, want := range map[string]time.Time{
		"2021-05-21T10:00:00Z":                at(2021, 5, 21, 10, 0, 0, 0),
		"2021-05-21":                          at(2021, 5, 21, 0, 0, 0, 0),
		"2021-05-21T10:00:00":                 at(2021, 5, 21, 10, 0, 0, 0), // no zone: UTC
		"2021-05-21T10:00":                    at(2021, 5, 21, 10, 0, 0, 0),
		"2021-05-21T12:00:00+0200":            at(2021, 5, 21, 10, 0, 0, 0),
		"2021-05-21T10:00:00+0000":            at(2021, 5, 21, 10, 0, 0, 0),
		"2021-05-21T10:00:00+00:00":           at(2021, 5, 21, 10, 0, 0, 0),
		"2021-05-21T10:00:00+00":              at(2021, 5, 21, 10, 0, 0, 0),
		"2021-05-21T05:30:00-04:30":           at(2021, 5, 21, 10, 0, 0, 0),
		"2021-05-21t10:00:00z":                at(2021, 5, 21, 10, 0, 0, 0),
		"2021-05-21 10:00:00Z":                at(2021, 5, 21, 10, 0, 0, 0),
		"2021-05-21T10:00:00.5Z":              at(2021, 5, 21, 10, 0, 0, 5e8),
		"2021-05-21T10:00:00,25Z":             at(2021, 5, 21, 10, 0, 0, 25e7),
		"2021-05-21T10:00:00.123456789Z":      at(2021, 5, 21, 10, 0, 0, 123456789),
		"2021-05-21T10:00:00.1234567891234Z":  at(2021, 5, 21, 10, 0, 0, 123456789),
		"2021-05-21T10:00:00.000001+01:00":    at(2021, 5, 21, 9, 0, 0, 1000),
		" 2021-05-21T10:00:00Z ":              at(2021, 5, 21, 10, 0, 0, 0),
		"2021-05-21T00:30:00+01:00":           at(2021, 5, 20, 23, 30, 0, 0),
		"2024-02-29":                          at(2024, 2, 29, 0, 0, 0, 0),
		"2021-12-31T23:59:59.999999999-00:00": at(2021, 12, 31, 23, 59, 59, 999999999),
	} {
		var ts Timestamp
		if err := json.Unmarshal([]byte(`"`+in+`"`), &ts); err != nil || ts.Err() != nil {
			t.Errorf("%q: %v, %v", in, err, ts.Err())
			continue
		}
		if !ts.Equal(want) || ts.Location() != time.UTC {
			t.Errorf("%q = %v, want %v", in, ts.Time, want)
		}
		var tt Timestamp
		if err := tt.UnmarshalText([]byte(in)); err != nil || !tt.Equal(want) {
			t.Errorf("UnmarshalText(%q) = %v, %v", in, tt.Time, err)
		}
	}
}

func TestTimestampKeepsUnreadableValues(t *testing.T) {
	for _, raw := range []string{
		`"yesterday"`, `"2021-05-21T10:00:00Q"`, `"2021-02-30"`, `"2021-13-01"`, `"2021-05-21T24:00:00Z"`,
		`"2021-05-21T10:60:00Z"`, `"2021-05-21T10:00:61Z"`, `"2021-05-21T10:00:00.Z"`, `"2021-05-21T10:00:00+2400"`,
		`"2021-05-21T10:00:00+02:0"`, `"2021-5-21"`, `"21-05-21"`, `"2021-05-21T"`, `"2021-05-21T10"`,
		`"2021-05-21T10:00:00Z extra"`, `"\u00e9t\u00e9"`, `1621591200`, `true`, `{"date":"2021-05-21"}`, `["x"]`,
	} {
		var ts Timestamp
		if err := json.Unmarshal([]byte(raw), &ts); err != nil {
			t.Errorf("%s: decoding failed: %v", raw, err)
			continue
		}
		if !errors.Is(ts.Err(), ErrUnreadableTimestamp) || !ts.IsZero() || ts.String() != "" {
			t.Errorf("%s: Err %v, time %v", raw, ts.Err(), ts.Time)
		}
		if strings.Contains(ts.Err().Error(), strings.Trim(raw, `"`)) {
			t.Errorf("%s: the error shows the value: %v", raw, ts.Err())
		}
		if out, err := json.Marshal(ts); err != nil || string(out) != raw {
			t.Errorf("%s: re-encoded as %s, %v", raw, out, err)
		}
	}
	var tt Timestamp
	if tt.UnmarshalText([]byte(`say "when"`)); tt.Err() == nil {
		t.Error("UnmarshalText accepted text")
	} else if out, _ := json.Marshal(tt); string(out) != `"say \"when\""` {
		t.Errorf("UnmarshalText kept %s", out)
	}
	for raw, zero := range map[string]bool{`""`: true, `null`: true} {
		ts := Timestamp{Time: time.Now()}
		if err := json.Unmarshal([]byte(raw), &ts); err != nil || ts.Err() != nil || ts.IsZero() != zero {
			t.Errorf("%s: %v %v %v", raw, ts.Time, err, ts.Err())
		}
	}
}

// TestUnreadableTimestampLosesOnlyItsField: a page whose one record carries
// an unreadable timestamp decodes whole; that field reports the problem and
// every other field and record is intact.
func TestUnreadableTimestampLosesOnlyItsField(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpListOrders.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"orders":[
			{"id":"o1","createDate":"2021-05-21","number":1},
			{"id":"o2","createDate":"last tuesday","number":2,"deleteDate":"2021-05-22T10:00:00+0000"},
			{"id":"o3","createDate":"2021-05-23t10:00:00.1234z","number":3}]}`)
	})
	orders, _, err := u.client().Shop.ListOrders(ctxT(t), &OrderListOptions{LocationRef: "l"})
	if err != nil {
		t.Fatal(err)
	}
	if len(orders) != 3 {
		t.Fatalf("%d orders", len(orders))
	}
	o1, o2, o3 := orders[0], orders[1], orders[2]
	if o1.CreateDate.Err() != nil || !o1.CreateDate.Equal(time.Date(2021, 5, 21, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("o1.createDate = %v, %v", o1.CreateDate.Time, o1.CreateDate.Err())
	}
	if o2.CreateDate.Err() == nil || o2.ID != "o2" || *o2.Number != 2 || !o2.DeleteDate.Equal(time.Date(2021, 5, 22, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("o2 = %+v (createDate %v)", o2, o2.CreateDate.Err())
	}
	if o3.CreateDate.Err() != nil || o3.CreateDate.Nanosecond() != 123400000 || *o3.Number != 3 {
		t.Errorf("o3.createDate = %v, %v", o3.CreateDate.Time, o3.CreateDate.Err())
	}
}

// FuzzParseISO8601: never a panic, and whatever time.Parse reads as RFC 3339
// is read as the same instant.
func FuzzParseISO8601(f *testing.F) {
	for _, s := range []string{"2021-05-21T10:00:00Z", "2021-05-21T10:00:00.123+02:00", "2021-05-21", "2021-05-21t10:00z", "2021-05-21T10:00:00,5-0130", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseISO8601(s)
		if want, err := time.Parse(time.RFC3339Nano, s); err == nil && (!ok || !got.Equal(want)) {
			t.Errorf("%q: %v %v, time.Parse %v", s, got, ok, want)
		}
		// UnmarshalJSON of the string (escaped or not) agrees, and keeps an
		// unreadable one as received.
		q, _ := json.Marshal(s)
		var ts Timestamp
		if err := ts.UnmarshalJSON(q); err != nil {
			t.Fatal(err)
		}
		switch back, _ := ts.MarshalJSON(); {
		case s == "":
			if !ts.IsZero() || ts.Err() != nil {
				t.Errorf("%q decoded to %v, %v", s, ts.Time, ts.Err())
			}
		case ok && (!ts.Equal(got) || ts.Err() != nil):
			t.Errorf("%s decoded to %v, %v; parseISO8601 %v", q, ts.Time, ts.Err(), got)
		case !ok && (ts.Err() == nil || string(back) != string(q)):
			t.Errorf("%s decoded to %v, %v, encodes back as %s", q, ts.Time, ts.Err(), back)
		}
	})
}

// BenchmarkTimestampUnmarshalJSON decodes the usual upstream timestamp (a
// quoted RFC 3339 string without escapes), as the codec hands it over.
func BenchmarkTimestampUnmarshalJSON(b *testing.B) {
	for _, in := range []string{`"2021-05-21T10:00:00Z"`, `"2021-05-21T10:00:00.123456+02:00"`} {
		b.Run(in[12:], func(b *testing.B) {
			raw := []byte(in)
			b.ReportAllocs()
			for b.Loop() {
				var ts Timestamp
				if err := ts.UnmarshalJSON(raw); err != nil || ts.IsZero() {
					b.Fatal(ts, err)
				}
			}
		})
	}
}
