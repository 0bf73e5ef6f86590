// Package sealbox seals small values (cursors, page tokens, cache entries)
// with AES-256-GCM under a key derived by HKDF-SHA256 from a secret and a
// purpose, so one secret can key several uses without them opening each
// other's values. A sealed value is nonce || ciphertext, with a random
// 12-byte nonce; the additional data binds it to where it belongs.
package sealbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// Box seals and opens values under one derived key. Safe for concurrent use.
type Box struct{ aead cipher.AEAD }

// ErrOpen is any value Open cannot open: too short, altered, sealed under
// another key or purpose, or with other additional data.
var ErrOpen = errors.New("sealbox: cannot open")

// New returns the Box of secret for purpose (HKDF info).
func New(secret []byte, purpose string) *Box {
	key, err := hkdf.Key(sha256.New, secret, nil, purpose, 32)
	if err != nil {
		panic("sealbox: hkdf: " + err.Error()) // only for a key length SHA-256 cannot give
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic("sealbox: " + err.Error()) // a 32-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("sealbox: " + err.Error())
	}
	return &Box{aead: aead}
}

// Seal appends nonce || AES-GCM(plaintext, ad) to dst (SealedLen bytes),
// allocating nothing when dst has room for them.
func (b *Box) Seal(dst, plaintext, ad []byte) []byte {
	ns := b.aead.NonceSize()
	start := len(dst)
	dst = append(dst, make([]byte, ns)...)
	_, _ = rand.Read(dst[start:])
	return b.aead.Seal(dst, dst[start:start+ns], plaintext, ad)
}

// SealedLen is the length of what Seal appends for n bytes of plaintext.
func (b *Box) SealedLen(n int) int { return b.aead.NonceSize() + n + b.aead.Overhead() }

// Open returns the plaintext of what Seal returned for the same ad.
func (b *Box) Open(sealed, ad []byte) ([]byte, error) {
	ns := b.aead.NonceSize()
	if len(sealed) < ns+b.aead.Overhead() {
		return nil, ErrOpen
	}
	pt, err := b.aead.Open(nil, sealed[:ns], sealed[ns:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}
