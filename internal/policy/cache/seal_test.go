package cache

import (
	"bytes"
	"strings"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

func TestSealOpensOnlyForTheSameCredentialAndKey(t *testing.T) {
	k, err := deriveKeys(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	key := k.entryKey(alpha, resRoute, resPath("res-1"))
	pt := resBody("res-1", "Aurora")
	sealed, err := k.seal(alpha, key, pt)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k.open(alpha, key, sealed); err != nil || !bytes.Equal(got, pt) {
		t.Fatalf("open = %q, %v", got, err)
	}
	// Handed alpha's store key and value, other callers cannot open it.
	for _, cr := range []restclient.Credentials{
		bravo, charlie,
		{Authorization: alpha.Authorization},
		{Authorization: alpha.Authorization + " ", NetworkID: alpha.NetworkID},
	} {
		if _, err := k.open(cr, key, sealed); err == nil {
			t.Errorf("%q/%q opened alpha's entry", cr.Authorization, cr.NetworkID)
		}
	}
	// Nor does it open under another key (moved entry).
	if _, err := k.open(alpha, k.entryKey(alpha, resRoute, resPath("res-2")), sealed); err == nil {
		t.Error("opened under another key")
	}
	// Nor with another server secret.
	other, _ := deriveKeys([]byte(strings.Repeat("z", MinSecretLen)))
	if _, err := other.open(alpha, key, sealed); err == nil {
		t.Error("opened with another secret")
	}
	// Nor modified.
	for i := range sealed {
		mod := bytes.Clone(sealed)
		mod[i] ^= 1
		if _, err := k.open(alpha, key, mod); err == nil {
			t.Fatalf("opened with byte %d modified", i)
		}
	}
	if _, err := k.open(alpha, key, sealed[:len(sealed)-1]); err == nil {
		t.Error("opened truncated")
	}
	// Sealing twice gives different values (random nonce).
	again, _ := k.seal(alpha, key, pt)
	if bytes.Equal(again, sealed) {
		t.Error("two seals are equal")
	}
}

func TestKeysRevealNothing(t *testing.T) {
	k, _ := deriveKeys(testSecret)
	ka := k.entryKey(alpha, notesRoute, notesRoute+"?invoiceRef=inv-7c1f&limit=25")
	tk := k.tagKey(notesRoute, tag{"invoiceRef", "inv-7c1f"})
	for _, key := range []string{ka, tk} {
		for _, secret := range []string{"inv-7c1f", "ALPHA", alpha.NetworkID, "credit_notes", alpha.Identity()} {
			if strings.Contains(key, secret) {
				t.Errorf("key %s contains %q", key, secret)
			}
		}
	}
	if !strings.HasPrefix(ka, "wnf:cache:e:") || len(ka) != len("wnf:cache:e:")+64 || !strings.HasPrefix(tk, "wnf:cache:t:") {
		t.Errorf("keys %s, %s", ka, tk)
	}
	// Every part of the key matters; fields cannot slide into each other.
	distinct := map[string]bool{
		ka: true,
		k.entryKey(bravo, notesRoute, notesRoute+"?invoiceRef=inv-7c1f&limit=25"):                      true,
		k.entryKey(charlie, notesRoute, notesRoute+"?invoiceRef=inv-7c1f&limit=25"):                    true,
		k.entryKey(alpha, notesRoute, notesRoute+"?invoiceRef=inv-7c1f&limit=26"):                      true,
		k.entryKey(alpha, restclient.OpListProducts.Route, notesRoute+"?invoiceRef=inv-7c1f&limit=25"): true,
		tk: true,
		k.tagKey(notesRoute, tag{"locationRef", "inv-7c1f"}): true,
		k.tagKey(notesRoute, tag{"invoiceRef", "inv-7c1g"}):  true,
		k.tagKey(notesRoute, tag{"invoiceRefi", "nv-7c1f"}):  true,
	}
	if len(distinct) != 9 {
		t.Errorf("%d distinct keys of 9", len(distinct))
	}
}
