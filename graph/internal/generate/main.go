// Command generate is `gqlgen generate` with our plugins (graph/internal/gqlgenplugin)
// added through gqlgen's plugin API: gqlgen's own (models, resolvers,
// federation from gqlgen.yml's federation section) run as they do in gqlgen's
// command, ours after them. Run by `go generate ./graph/`; it finds
// gqlgen.yml by walking up from its directory, as gqlgen does, and is quiet
// unless -verbose.
package main

import (
	"flag"
	"io"
	"log"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"

	"github.com/workspacenet/facade/graph/internal/gqlgenplugin"
)

func main() {
	verbose := flag.Bool("verbose", false, "show gqlgen's logs")
	flag.Parse()
	if !*verbose {
		log.SetOutput(io.Discard)
	}
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err == nil {
		err = api.Generate(cfg, api.AddPlugin(gqlgenplugin.Objects{}))
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
}
