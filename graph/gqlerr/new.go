package gqlerr

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
)

// New returns the GraphQL error message with extensions.code code and the
// extensions ext besides (nil: none): every coded error graph builds
// itself, outside the errors its resolvers return (Presenter).
func New(code, message string, ext map[string]any) *gqlerror.Error {
	e := &gqlerror.Error{Message: message, Extensions: make(map[string]any, len(ext)+1)}
	maps.Copy(e.Extensions, ext)
	e.Extensions["code"] = code
	return e
}

// NewAt is New located at pos in the document (nil: no location).
func NewAt(pos *ast.Position, code, message string, ext map[string]any) *gqlerror.Error {
	e := New(code, message, ext)
	if pos != nil {
		e.Locations = []gqlerror.Location{{Line: pos.Line, Column: pos.Column}}
	}
	return e
}

// Internal returns the INTERNAL error shown for what cannot be said
// ("internal error").
func Internal() *gqlerror.Error { return New(errcode.Internal, "internal error", nil) }

// InternalErrors is the JSON of the errors list of Internal: what a
// transport writes when a response cannot be encoded.
var InternalErrors = func() []byte {
	b, err := json.Marshal(gqlerror.List{Internal()})
	if err != nil {
		panic(err)
	}
	return b
}()

// ResponseTooLarge is the RESPONSE_TOO_LARGE error of a response of size
// bytes of data, above maxBytes.
func ResponseTooLarge(size, maxBytes int) *gqlerror.Error {
	return New(errcode.ResponseTooLarge,
		fmt.Sprintf("the response is larger than the limit: %d bytes of data, maximum %d; ask for fewer fields or smaller pages", size, maxBytes),
		map[string]any{"value": size, "maximum": maxBytes})
}
