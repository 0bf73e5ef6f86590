package cache

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"

	"github.com/workspacenet/facade/internal/base/sealbox"

	"github.com/workspacenet/facade/restclient"
)

// Store keys and values
//
// An entry's store key is entryPrefix and the hex HMAC-SHA256, under a key
// derived from the server secret, of the caller's identity, the route and the
// path; a tag's key is tagPrefix and the hex HMAC, under another derived key,
// of the route, the parameter and its value. Neither reveals a credential or
// an id. An entry's value is sealed: sealFormat, a random 12-byte nonce and
// the AES-256-GCM ciphertext of its tags' versions (tokenLen bytes each, in
// tagsOf order) followed by the body, with the store key as additional data
// and a key derived by HKDF-SHA256 from the server secret and the caller's
// Authorization and network id.

const (
	keyPrefix   = "wnf:cache:"
	entryPrefix = keyPrefix + "e:"
	tagPrefix   = keyPrefix + "t:"

	sealFormat byte = 1
	tokenLen        = 16 // a tag version: random bytes
)

var errUnsealed = errors.New("cache: entry does not open")

// keys are the secrets derived from Config.Secret, one per use.
type keys struct {
	entry    []byte // HMAC key of entry store keys
	tag      []byte // HMAC key of tag store keys
	sealRoot []byte // input, with a credential, of that credential's seal key
}

func deriveKeys(secret []byte) (keys, error) {
	var k keys
	for _, d := range []struct {
		dst  *[]byte
		info string
	}{{&k.entry, "wnf:cache:v1 entry key"}, {&k.tag, "wnf:cache:v1 tag key"}, {&k.sealRoot, "wnf:cache:v1 seal root"}} {
		b, err := hkdf.Key(sha256.New, secret, nil, d.info, 32)
		if err != nil {
			return keys{}, err
		}
		*d.dst = b
	}
	return k, nil
}

// writeField writes s length-prefixed, so adjacent fields cannot be confused.
func writeField(h hash.Hash, s string) {
	h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(s))))
	h.Write([]byte(s))
}

// entryKey is the store key of creds' GET of path on route.
func (k keys) entryKey(creds restclient.Credentials, route, path string) string {
	h := hmac.New(sha256.New, k.entry)
	writeField(h, creds.Identity())
	writeField(h, route)
	writeField(h, path)
	return entryPrefix + hex.EncodeToString(h.Sum(nil))
}

// tagKey is the store key of the version of t on route, shared by every
// identity.
func (k keys) tagKey(route string, t tag) string {
	h := hmac.New(sha256.New, k.tag)
	writeField(h, route)
	writeField(h, t.param)
	writeField(h, t.value)
	return tagPrefix + hex.EncodeToString(h.Sum(nil))
}

// box returns the sealer of creds' entries: its key depends on the server
// secret and on the whole credential, not only its identity hash.
func (k keys) box(creds restclient.Credentials) *sealbox.Box {
	ikm := make([]byte, 0, len(k.sealRoot)+8+len(creds.Authorization)+len(creds.NetworkID))
	ikm = append(ikm, k.sealRoot...)
	for _, f := range []string{creds.Authorization, creds.NetworkID} {
		ikm = binary.BigEndian.AppendUint32(ikm, uint32(len(f)))
		ikm = append(ikm, f...)
	}
	return sealbox.New(ikm, "wnf:cache:v1 seal")
}

// seal encrypts plaintext for creds under store key: a format byte, then
// the sealbox value.
func (k keys) seal(creds restclient.Credentials, key string, plaintext []byte) ([]byte, error) {
	return k.box(creds).Seal([]byte{sealFormat}, plaintext, []byte(key)), nil
}

// open decrypts what seal returned for the same creds and key; any other
// credential, key or a modified value is errUnsealed.
func (k keys) open(creds restclient.Credentials, key string, sealed []byte) ([]byte, error) {
	if len(sealed) < 1 || sealed[0] != sealFormat {
		return nil, errUnsealed
	}
	pt, err := k.box(creds).Open(sealed[1:], []byte(key))
	if err != nil {
		return nil, errUnsealed
	}
	return pt, nil
}

// newToken returns a fresh tag version.
func newToken() []byte {
	b := make([]byte, tokenLen)
	rand.Read(b)
	return b
}
