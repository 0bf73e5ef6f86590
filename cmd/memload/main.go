// Command memload measures the facade's peak memory under load: it starts
// the stack in this process (the local REST service on demo data at
// -demo-scale, and the facade with its default limits, as `go run .`), sends
// rounds of -concurrency of the heaviest operations the default cost limit
// allows, all at once, and prints the process's peak RSS (VmHWM of
// /proc/self/status) after startup and after the load (RELIABILITY.md,
// "Memory under load"). The REST service's own memory is in both figures.
//
//	go run ./cmd/memload                          # the defaults
//	go run ./cmd/memload -max-cost-in-flight=0    # without admission control
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/stack"
)

func main() {
	concurrency := flag.Int("concurrency", 12, "operations sent at once per round")
	rounds := flag.Int("rounds", 3, "rounds")
	scale := flag.Int("demo-scale", 10, "demo data size")
	shape := flag.String("shape", "wide", "wide: 19 locations' unpaged product lists (cost 9709); deep: transactions with invoices and credit notes (cost 9902)")
	inFlight := flag.Int("max-cost-in-flight", -1, "override -max-cost-in-flight (-1: the default)")
	flag.Parse()

	// Pacing off on both sides: the worst case for memory is every call at once.
	cfg, err := stack.ParseFlags([]string{"-data-dir=", "-metrics-addr=", "-upstream-rps=0", "-demo-rate-limit=0", "-cache-ttl="}, func(string) string { return "" }, io.Discard)
	if err != nil {
		log.Fatal(err)
	}
	cfg.DemoScale = *scale
	if *inFlight >= 0 {
		cfg.Graph.MaxCostInFlight = *inFlight
	}
	st, err := stack.Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = st.Serve(ln) }()
	defer st.Close()
	m := st.Embedded.Manifest
	c := &gqlclient.Client{URL: "http://" + ln.Addr().String() + "/graphql", Header: gqlclient.Credentials("Bearer "+m.BearerToken, m.NetworkID)}
	locs := m.IDs["location"]

	fmt.Printf("demo-scale %d, max-cost %d, max-cost-in-flight %d, admission-wait %v, max-response-bytes %d\n",
		cfg.DemoScale, cfg.Graph.Limits.MaxCost, cfg.Graph.MaxCostInFlight, cfg.Graph.AdmissionWait, cfg.Graph.MaxResponseBytes)
	fmt.Printf("after startup: VmHWM %s\n", hwm())

	codes := map[string]int{}
	var mu sync.Mutex
	maxBytes := 0
	start := time.Now()
	for round := range *rounds {
		var wg sync.WaitGroup
		for i := range *concurrency {
			wg.Go(func() {
				// Cost 2 + n*(3 + k) <= 10000; page sizes differ per request so
				// no two share an upstream GET.
				n := 100 - (round*(*concurrency)+i)%20
				k := 9998/n - 3
				q := wideQuery(locs, i)
				if *shape == "deep" {
					q = fmt.Sprintf(`{ location(id: %q) { transactions(first: %d) { nodes { id amount createDate currencyCode locationRef membershipRef status type
				  invoice { id number title status createDate issueDate dueDate amount
				    creditNotes(first: %d) { nodes { id createDate creditAmount currencyCode effectiveDate invoiceRef internalNote locationRef } } } } } } }`,
						locs[i%len(locs)], n, k)
				}
				r, err := c.Post(context.Background(), gqlclient.Request{Query: q}, nil)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					codes["transport: "+err.Error()]++
					return
				}
				maxBytes = max(maxBytes, len(r.Raw))
				if len(r.Errors) == 0 {
					codes["ok"]++
				}
				seen := map[string]bool{}
				for _, e := range r.Errors {
					if !seen[e.Code()] {
						codes[fmt.Sprintf("HTTP %d %s %.80s", r.Status, e.Code(), e.Message)]++
						seen[e.Code()] = true
					}
				}
			})
		}
		wg.Wait()
	}
	fmt.Printf("%d rounds of %d in %v: %v; largest response %d bytes\n", *rounds, *concurrency, time.Since(start).Round(time.Millisecond), codes, maxBytes)
	fmt.Printf("after load: VmHWM %s\n", hwm())
}

func hwm() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err.Error()
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// wideQuery asks for the products of 19 locations with their options and
// media: unpaged lists, counted at 10 elements each whatever their real
// length. Cost 9709 (511 a location).
func wideQuery(locs []string, i int) string {
	var b strings.Builder
	b.WriteString("{ ")
	for j := range 19 {
		fmt.Fprintf(&b, `l%d: location(id: %q) { products { id categoryRef locationRef createDate updateDate description imageUrl refundPolicy title visibility featured
		  media { key url } options { id available createDate description title price { __typename } stock { __typename } customTax { __typename } } } } `, j, locs[(i+j)%len(locs)])
	}
	b.WriteString("}")
	return b.String()
}
