package graph

// Regenerates graph/generated, graph/model/models_gen.go and the resolver
// stubs from ../schema.graphqls and ../gqlgen.yml: graph/internal/generate runs
// gqlgen's generation (api.Generate) with our plugin
// (graph/internal/gqlgenplugin), which writes generated/objects.go: the
// marshaller of every object type by its name (generated.Objects). It finds
// gqlgen.yml by walking up from this directory and resolves its paths from
// there. gqlgen.yml sets skip_mod_tidy: generation never runs `go mod tidy`.
//go:generate go run ./internal/generate
