package sealbox

import (
	"bytes"
	"testing"
)

func TestSealOpen(t *testing.T) {
	b := New([]byte("0123456789abcdef0123456789abcdef"), "test v1")
	sealed := b.Seal([]byte{7}, []byte("hello"), []byte("ad"))
	if sealed[0] != 7 || bytes.Contains(sealed, []byte("hello")) {
		t.Fatalf("sealed %x", sealed)
	}
	if pt, err := b.Open(sealed[1:], []byte("ad")); err != nil || string(pt) != "hello" {
		t.Fatalf("open: %q %v", pt, err)
	}
	if again := b.Seal(nil, []byte("hello"), []byte("ad")); bytes.Equal(again, sealed[1:]) {
		t.Error("two seals of one value are equal: the nonce is not random")
	}
	other := New([]byte("0123456789abcdef0123456789abcdef"), "test v2")
	for name, open := range map[string]func() ([]byte, error){
		"other ad":      func() ([]byte, error) { return b.Open(sealed[1:], []byte("AD")) },
		"other purpose": func() ([]byte, error) { return other.Open(sealed[1:], []byte("ad")) },
		"altered":       func() ([]byte, error) { c := bytes.Clone(sealed[1:]); c[len(c)-1] ^= 1; return b.Open(c, []byte("ad")) },
		"short":         func() ([]byte, error) { return b.Open(sealed[1:5], []byte("ad")) },
	} {
		if _, err := open(); err != ErrOpen {
			t.Errorf("%s: %v, want ErrOpen", name, err)
		}
	}
}
