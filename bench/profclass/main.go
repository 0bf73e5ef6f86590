// Command profclass prints where a CPU profile of the facade spends its time,
// by category (BENCHMARKS.md, "Where the time goes"): a sample is GC when any
// frame of its stack is; otherwise it belongs to the category naming the
// package of its leaf-most frame that one names, passing over the generic
// frames (net, net/http, syscalls, bufio, io, the JSON libraries), which
// belong to the first caller that is named (restclient: the HTTP client;
// restclient.unmarshal: decoding; the GraphQL transport: response writing),
// or else to the HTTP server (net/http's connection reading the request and
// flushing the response) or to the HTTP client (the reading and writing
// goroutines of net/http's client connections, which every upstream call
// goes through).
//
//	go run ./bench -cost-only -batched-only -only feed -cpuprofile /tmp/p
//	go run ./bench/profclass /tmp/p.feed.pprof
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/google/pprof/profile"
)

const me = "github.com/workspacenet/facade/"

var cats = []struct {
	name string
	pre  []string
}{
	{"upstream JSON decoding", []string{me + "restclient.(*Timestamp)", me + "restclient.unmarshal", me + "restclient.decode",
		// the generated decoders (restclient/decode_gen.go, fastjson.go)
		me + "restclient.(*decoder)", me + "restclient.(*slab", me + "restclient.(*arena)", me + "restclient.(*scratch)", me + "restclient.run", me + "restclient.special", me + "restclient.parseISO8601",
		me + "restclient..fast", me + "restclient.fast", me + "restclient.mergeSlice", me + "restclient.stringElem"}},
	{"gqlgen execution and response writing", []string{"github.com/99designs/gqlgen", "github.com/vektah/", me + "graph/generated", me + "graph/scalars", me + "graph.", me + "graph/model", me + "graph/paging"}},
	{"loaders", []string{"github.com/graph-gophers/dataloader", me + "graph/loaders"}},
	{"HTTP client and upstream I/O", []string{me + "restclient", "github.com/sony/gobreaker", "golang.org/x/time"}},
	{"request pipeline", []string{me + "graph/guard", me + "graph/limits", me + "internal/", me + "graph/admission", "log/slog", "github.com/rs/cors"}},
	{"bench harness", []string{"main."}},
}

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	p, err := profile.Parse(f)
	if err != nil {
		panic(err)
	}
	idx := len(p.SampleType) - 1
	var total int64
	by := map[string]int64{}
	for _, s := range p.Sample {
		v := s.Value[idx]
		total += v
		by[classify(s)] += v
	}
	for _, c := range []string{"GC", cats[0].name, cats[1].name, cats[2].name, cats[3].name, cats[4].name, cats[5].name, "HTTP server I/O", "scheduler and other runtime"} {
		fmt.Printf("%s\t%.0f\n", c, 100*float64(by[c])/float64(total))
	}
}

func classify(s *profile.Sample) string {
	var fns []string // leaf first
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			fns = append(fns, ln.Function.Name)
		}
	}
	for _, fn := range fns {
		if strings.HasPrefix(fn, "runtime.gcBgMarkWorker") || strings.HasPrefix(fn, "runtime.gcAssistAlloc") || strings.HasPrefix(fn, "runtime.bgsweep") || strings.HasPrefix(fn, "runtime.bgscavenge") {
			return "GC"
		}
	}
	io, server := false, false
	for _, fn := range fns {
		if hasPrefix(fn, genericIO) {
			io = true
			server = server || strings.HasPrefix(fn, "net/http.(*conn)")
			continue
		}
		if strings.HasPrefix(fn, "github.com/99designs/gqlgen/graphql/handler/transport") || strings.HasPrefix(fn, me+"graph/overhttp") {
			return "gqlgen execution and response writing"
		}
		for _, c := range cats {
			if hasPrefix(fn, c.pre) {
				return c.name
			}
		}
	}
	switch {
	case server:
		return "HTTP server I/O"
	case io:
		return "HTTP client and upstream I/O" // net/http's client connection goroutines
	}
	return "scheduler and other runtime"
}

// genericIO are the frames of work any side does: I/O, and the JSON
// libraries (the request pipeline reads the request body and the GraphQL
// transport writes errors with encoding/json; go-json's frames count too, in
// the profiles of builds that link it).
var genericIO = []string{"net/http", "internal/poll", "syscall", "net.", "bufio", "io.", "crypto/tls",
	"encoding/json.", "github.com/goccy/go-json"}

func hasPrefix(fn string, pres []string) bool {
	for _, pre := range pres {
		if strings.HasPrefix(fn, pre) {
			return true
		}
	}
	return false
}
