package guard

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddress returns the key of the remote address r came from, for
// bounds kept per client address: the TCP peer's address, or, when the
// peer is one of trusted (proxies whose X-Forwarded-For is believed), the
// address X-Forwarded-For names right of every trusted one (the first
// untrusted hop, reading from the right: the left part is the client's to
// write). An entry that is not an address ends the walk at the last
// trusted hop's address, so a made-up header never escapes the bound of
// the proxy that relayed it. An IPv6 address is keyed by its /64 prefix
// (one host holds a whole /64); an IPv4-mapped one as IPv4. A peer that
// is not an address (a pipe, a test) is keyed as it is.
func ClientAddress(r *http.Request, trusted []netip.Prefix) string {
	peer, ok := parseAddr(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if len(trusted) == 0 || !contains(trusted, peer) {
		return addrKey(peer)
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	last := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseAddr(strings.TrimSpace(hops[i]))
		if !ok {
			break
		}
		if !contains(trusted, a) {
			return addrKey(a)
		}
		last = a
	}
	return addrKey(last)
}

// ParsePrefixes parses a list of addresses and CIDR prefixes (an address
// is its own /32 or /128).
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, err
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, err
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// parseAddr reads "host:port", "[v6]:port" or a bare address.
func parseAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

func contains(prefixes []netip.Prefix, a netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// addrKey is a's key: IPv4 as it is, IPv6 its /64.
func addrKey(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
