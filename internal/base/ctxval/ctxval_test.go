package ctxval

import (
	"context"
	"testing"
)

type keyA struct{}
type keyB struct{}

func TestValueUnderItsKeyOnly(t *testing.T) {
	parent := context.WithValue(context.Background(), keyB{}, "parent's")
	v := 7
	c := &Context[keyA, *int]{Context: parent, V: &v}
	if got, ok := c.Value(keyA{}).(*int); !ok || got != &v {
		t.Errorf("Value(keyA) = %v, want the carried value", c.Value(keyA{}))
	}
	if got := c.Value(keyB{}); got != "parent's" {
		t.Errorf("Value(keyB) = %v, want the parent's", got)
	}
	if got := c.Value("other"); got != nil {
		t.Errorf("Value(other) = %v, want nil", got)
	}
	if testing.AllocsPerRun(100, func() { _ = c.Value(keyA{}) }) != 0 {
		t.Error("a lookup allocates")
	}
}
