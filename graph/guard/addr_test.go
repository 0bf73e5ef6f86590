package guard

import (
	"net/http"
	"testing"
)

func TestClientAddress(t *testing.T) {
	proxies, err := ParsePrefixes([]string{"10.0.0.0/8", "192.0.2.1", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"no proxy: the peer", "203.0.113.5:4000", nil, "203.0.113.5"},
		{"an untrusted peer's header is ignored", "203.0.113.5:4000", []string{"198.51.100.7"}, "203.0.113.5"},
		{"a trusted peer: the hop it names", "10.1.2.3:4000", []string{"198.51.100.7"}, "198.51.100.7"},
		{"the first untrusted hop from the right", "10.1.2.3:4000", []string{"6.6.6.6, 198.51.100.7, 10.9.9.9"}, "198.51.100.7"},
		{"several header lines are one list", "10.1.2.3:4000", []string{"6.6.6.6", "198.51.100.7", "192.0.2.1"}, "198.51.100.7"},
		{"all trusted: the leftmost", "10.1.2.3:4000", []string{"10.4.4.4, 192.0.2.1"}, "10.4.4.4"},
		{"garbage stops at the last trusted hop", "10.1.2.3:4000", []string{"198.51.100.7, not-an-ip, 10.9.9.9"}, "10.9.9.9"},
		{"no header: the proxy itself", "10.1.2.3:4000", nil, "10.1.2.3"},
		{"an address with a port", "10.1.2.3:4000", []string{"198.51.100.7:5555"}, "198.51.100.7"},
		{"IPv6 keyed by its /64", "[2001:db8:1:2:3:4:5:6]:443", nil, "2001:db8:1:2::/64"},
		{"two hosts of one /64 are one", "[2001:db8:1:2::9]:443", nil, "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6 is IPv4", "[::ffff:203.0.113.5]:443", nil, "203.0.113.5"},
		{"an IPv6 hop behind an IPv6 proxy", "[fd00::1]:443", []string{"2001:db8:9::1"}, "2001:db8:9::/64"},
		{"a peer that is not an address", "pipe", nil, "pipe"},
	} {
		r := &http.Request{RemoteAddr: c.peer, Header: http.Header{}}
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := ClientAddress(r, proxies); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if _, err := ParsePrefixes([]string{"10.0.0.0/33"}); err == nil {
		t.Error("a prefix longer than the address: no error")
	}
	if _, err := ParsePrefixes([]string{"proxy.example"}); err == nil {
		t.Error("a host name: no error")
	}
}
