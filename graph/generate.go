package graph

// Regenerates graph/generated, graph/model/models_gen.go and the resolver
// stubs from ../schema.graphqls and ../gqlgen.yml (found by walking up), with
// gqlgen run by graph/internal/gqlgen, which also lets the executor run
// inline what cannot wait for the network (graph/inline).
// gqlgen.yml sets skip_mod_tidy: generation never runs `go mod tidy`.
//go:generate go run ./internal/gqlgen
