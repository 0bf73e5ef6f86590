package graph

// Regenerates graph/generated, graph/model/models_gen.go and the resolver
// stubs from ../schema.graphqls and ../gqlgen.yml (found by walking up).
// gqlgen.yml sets skip_mod_tidy: generation never runs `go mod tidy`.
//go:generate go tool gqlgen generate
