package graph

// Regenerates graph/generated, graph/model/models_gen.go and the resolver
// stubs from ../schema.graphqls and ../gqlgen.yml: gqlgen finds gqlgen.yml by
// walking up from this directory and resolves its paths from there.
// gqlgen.yml sets skip_mod_tidy: generation never runs `go mod tidy`.
//go:generate go tool gqlgen generate
