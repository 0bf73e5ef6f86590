package graph

// Regenerates graph/generated, graph/model/models_gen.go and the resolver
// stubs from ../schema.graphqls and ../gqlgen.yml: gqlgen finds gqlgen.yml by
// walking up from this directory and resolves its paths from there.
// gqlgen.yml sets skip_mod_tidy: generation never runs `go mod tidy`. Then
// graph/internal/objectsgen writes generated/objects_gen.go from what gqlgen
// wrote: the marshaller of every object type by its name (generated.Objects).
//go:generate go tool gqlgen generate
//go:generate go run ./internal/objectsgen -in generated/generated.go -out generated/objects_gen.go
