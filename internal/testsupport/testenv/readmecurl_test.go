package testenv

import (
	"strings"
	"testing"
)

// TestParseShellAsBash: the README's shell forms give the request bash and
// curl would send, and forms the parser cannot run faithfully are refused
// rather than guessed.
func TestParseShellAsBash(t *testing.T) {
	block := `# comment
B=http://127.0.0.1:8081
NET=fc37   # trailing comment
BASIC='id:secret'
H=(-H 'Authorization: Bearer tok' -H "service-network-id: $NET")
curl -s -u $BASIC "$B/x?a=1&b=$NET" # 1
curl -s "${H[@]}" -X PUT -H 'Content-Type: application/json' ${B}/y \
  -d "{\"k\":\"$NET\",\"d\":\"\$1\"}"   # 2
curl -s $B/z -d 'a=b'
`
	got, err := parseShell(block, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d commands, want 3", len(got))
	}
	a, b, c := got[0], got[1], got[2]
	if a.line != 15 || a.Method != "GET" || a.URL != "http://127.0.0.1:8081/x?a=1&b=fc37" || a.Header.Get("Authorization") != "Basic aWQ6c2VjcmV0" || a.Body != "" {
		t.Errorf("first: line %d %s %s %v %q", a.line, a.Method, a.URL, a.Header, a.Body)
	}
	if b.line != 16 || b.Method != "PUT" || b.URL != "http://127.0.0.1:8081/y" || b.Header.Get("Authorization") != "Bearer tok" ||
		b.Header.Get("service-network-id") != "fc37" || b.Body != `{"k":"fc37","d":"$1"}` || b.Header.Get("Content-Type") != "application/json" {
		t.Errorf("second: line %d %s %s %v %q", b.line, b.Method, b.URL, b.Header, b.Body)
	}
	if c.Method != "POST" || c.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || c.Body != "a=b" {
		t.Errorf("third (curl -d defaults): %s %v %q", c.Method, c.Header, c.Body)
	}

	for name, bad := range map[string]string{
		"unset variable":          "curl -s $NOPE/x",
		"unknown curl option":     "curl -s -L http://127.0.0.1:8081/x",
		"another command":         "wget http://127.0.0.1:8081/x",
		"unquoted blanks":         "V='a b'\ncurl -s http://127.0.0.1:8081/$V",
		"unterminated quote":      `curl -s "http://127.0.0.1:8081/x`,
		"array in a word":         "A=(x y)\ncurl -s \"-${A[@]}\" http://127.0.0.1:8081/x",
		"two bodies":              "curl -s -d a -d b http://127.0.0.1:8081/x",
		"assignment of two words": "V=a b",
	} {
		if _, err := parseShell(bad, 1); err == nil {
			t.Errorf("%s: %q parsed", name, bad)
		} else if !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: error %q does not name the line", name, err)
		}
	}
}
