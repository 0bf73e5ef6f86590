package openapi

import "testing"

func TestLoad(t *testing.T) {
	if _, err := NewValidator(); err != nil {
		t.Fatal(err)
	}
}
