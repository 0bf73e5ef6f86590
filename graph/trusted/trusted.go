// Package trusted implements trusted documents: a fixed set of operations,
// registered ahead of time, that are the only ones the facade executes. The
// registry is a JSON object mapping the sha256 (hex) of each document to the
// document, the same hash Automatic Persisted Queries use.
//
// A request names its document by extensions.persistedQuery.sha256Hash (as
// Apollo clients send it) or by documentId ("<hex>" or "sha256:<hex>"). A
// request that also sends the query text is accepted only if that text is the
// registered document. Anything else is refused before parsing, so it costs
// no upstream call.
package trusted

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
)

// Documents maps sha256 hex to document.
type Documents map[string]string

// Hash returns the sha256 hex of doc.
func Hash(doc string) string {
	h := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(h[:])
}

// Load reads a registry file and checks that every key is the hash of its
// document.
func Load(path string) (Documents, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var docs Documents
	if err := json.Unmarshal(raw, &docs); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of hash -> document: %w", path, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no documents", path)
	}
	out := make(Documents, len(docs))
	for k, doc := range docs {
		k = strings.ToLower(strings.TrimPrefix(k, "sha256:"))
		if Hash(doc) != k {
			return nil, fmt.Errorf("%s: key %.16s… is not the sha256 of its document", path, k)
		}
		out[k] = doc
	}
	return out, nil
}

type docIDKey struct{}

// WithDocumentID returns ctx carrying the documentId a request sent outside
// extensions (a top-level body field or a GET parameter), which gqlgen's
// transports do not decode.
func WithDocumentID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, docIDKey{}, id)
}

// Extension is the gqlgen handler extension that enforces the registry.
type Extension struct{ Docs Documents }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = Extension{}

// ExtensionName implements graphql.HandlerExtension.
func (Extension) ExtensionName() string { return "TrustedDocuments" }

// Validate implements graphql.HandlerExtension.
func (x Extension) Validate(graphql.ExecutableSchema) error {
	if len(x.Docs) == 0 {
		return fmt.Errorf("trusted documents: empty registry")
	}
	return nil
}

// MutateOperationParameters replaces the request's query by the registered
// document it names, or refuses the request.
func (x Extension) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	id, _ := ctx.Value(docIDKey{}).(string)
	if pq, ok := p.Extensions["persistedQuery"].(map[string]any); ok && id == "" {
		id, _ = pq["sha256Hash"].(string)
	}
	if id == "" {
		return refuse(errcode.OperationNotTrusted, "this server executes registered operations only: send extensions.persistedQuery.sha256Hash or documentId")
	}
	id = strings.ToLower(strings.TrimPrefix(id, "sha256:"))
	doc, ok := x.Docs[id]
	if !ok {
		return refuse(errcode.PersistedQueryNotFound, "no registered operation has this hash")
	}
	if p.Query != "" && p.Query != doc {
		return refuse(errcode.OperationNotTrusted, "the query sent is not the registered operation of this hash")
	}
	p.Query = doc
	return nil
}

func refuse(code, msg string) *gqlerror.Error { return gqlerr.New(code, msg, nil) }

// OperationNames returns the names of the operations the documents define
// (metrics label them by name); documents that do not parse add none.
func (d Documents) OperationNames() []string {
	var names []string
	for _, doc := range d {
		q, err := parser.ParseQuery(&ast.Source{Input: doc})
		if err != nil {
			continue
		}
		for _, op := range q.Operations {
			if op.Name != "" {
				names = append(names, op.Name)
			}
		}
	}
	return names
}
