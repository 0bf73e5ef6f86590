package restclient

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestDecodeItemsReadsWhatJSONWrote: an object encoded with encoding/json
// decodes to an equal value.
func TestDecodeItemsReadsWhatJSONWrote(t *testing.T) {
	status := OrderStatusCompleted
	loc := "loc"
	in := []*Order{{ID: "a", LocationRef: &loc, Status: &status, CreateDate: &Timestamp{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}}
	b, err := json.Marshal(map[string]any{"items": in})
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeItems[Order](b)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("DecodeItems = %+v %v, want %+v", out, err, in)
	}
}

// TestDecodeItemsOfEveryWatchedObject: every object internal/policy/live watches
// has its decoders.
func TestDecodeItemsOfEveryWatchedObject(t *testing.T) {
	empty := []byte(`{"items":[]}`)
	for name, decode := range map[string]func() error{
		"Transaction": func() error { _, err := DecodeItems[Transaction](empty); return err },
		"Order":       func() error { _, err := DecodeItems[Order](empty); return err },
		"CreditNote":  func() error { _, err := DecodeItems[CreditNote](empty); return err },
		"Redemption":  func() error { _, err := DecodeItems[Redemption](empty); return err },
		"Comment":     func() error { _, err := DecodeItems[Comment](empty); return err },
		"Visit":       func() error { _, err := DecodeItems[Visit](empty); return err },
		"Resource":    func() error { _, err := DecodeItems[Resource](empty); return err },
		"Event":       func() error { _, err := DecodeItems[Event](empty); return err },
		"Product":     func() error { _, err := DecodeItems[Product](empty); return err },
	} {
		if err := decode(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
