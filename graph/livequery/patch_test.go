package livequery

import (
	"encoding/json"
	"testing"
)

// TestLiftLeavesOtherResponsesAlone: a response without the live query's
// marker is written byte for byte; a first result and an update take the
// convention's shape.
func TestLiftLeavesOtherResponsesAlone(t *testing.T) {
	plain := []byte(`{"data":{"liveResult":1},"extensions":{"upstream":{"count":2}}}`)
	if got := Lift(plain); string(got) != string(plain) {
		t.Fatalf("Lift(%s) = %s", plain, got)
	}
	first := []byte(`{"data":{"a":1},"extensions":{"liveResult":{"revision":1},"live":{}}}`)
	var f map[string]any
	if err := json.Unmarshal(Lift(first), &f); err != nil || f["revision"] != float64(1) || f["data"] == nil || f["extensions"].(map[string]any)["liveResult"] != nil {
		t.Fatalf("first: %s", Lift(first))
	}
	upd := []byte(`{"data":null,"extensions":{"liveResult":{"revision":2,"patch":[{"op":"replace","path":"/a","value":2}]}}}`)
	if got := string(Lift(upd)); got != `{"patch":[{"op":"replace","path":"/a","value":2}],"revision":2}` {
		t.Fatalf("update: %s", got)
	}
}

// TestDiff: the patch of two documents: members added, removed and
// replaced, list tails, escaped keys, null values kept.
func TestDiff(t *testing.T) {
	ops, err := Diff([]byte(`{"a":1,"b":[1,2,3],"c/d":"x","e":{"f":true}}`), []byte(`{"a":1,"b":[1,5],"c/d":null,"e":{"f":true,"g":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(ops)
	want := `[{"op":"replace","path":"/b/1","value":5},{"op":"remove","path":"/b/2"},{"op":"replace","path":"/c~1d","value":null},{"op":"add","path":"/e/g","value":[]}]`
	if string(got) != want {
		t.Fatalf("Diff = %s\nwant %s", got, want)
	}
}
