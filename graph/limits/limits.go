// Package limits bounds what one GraphQL operation may ask for, checked after
// validation and before execution, so a refused operation costs no upstream
// call. It measures the operation's depth, aliases, root fields and cost with
// fragments resolved. Introspection fields (__schema, __type) are answered
// locally: their depth is bounded by the validator's own introspection-depth
// rule (they count as one level here), and their cost is measured with the
// schema's own numbers (SchemaSize), so it reflects the size of their answer.
//
// Cost: every object (or list element) the response can hold costs 1; a
// connection field multiplies the cost of its edges and nodes by its `first`
// argument (its default when absent); any other list multiplies its elements
// by Config.ListEstimate (the upstream does not page products, comments,
// invoice items and the like). Scalars and enums are free. Federation's
// `_entities` costs, for each representation it is given, 1 plus the cost of
// the selection on that representation's __typename (entities.go), and
// Config.MaxRepresentations bounds how many it may be given.
package limits

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	gqlerrcode "github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/scalars"
	"github.com/workspacenet/facade/graph/walk"
)

// Names of the limits, as carried in extensions.limit.
const (
	Depth      = "depth"
	Aliases    = "aliases"
	RootFields = "rootFields"
	Cost       = "cost"
	Tokens     = "tokens"
	// Representations is the limit on the representations of `_entities`.
	Representations = "representations"
)

// Defaults (DefaultConfig): they let GraphiQL's introspection query and
// every documented query (internal/testsupport/queries) through with a wide margin.
const (
	DefaultMaxDepth      = 12
	DefaultMaxAliases    = 30
	DefaultMaxRootFields = 20
	DefaultMaxCost       = 10000
	DefaultMaxTokens     = 15000
	DefaultListEstimate  = 10
	// DefaultMaxRepresentations bounds the representations one operation may
	// give `_entities` (a router's batch of entity lookups).
	DefaultMaxRepresentations = 500
)

// walkBudget bounds the work of one measurement: fragments spread many times
// can make an expanded operation exponentially larger than its text.
const walkBudget = 200000

func init() {
	// A limit error is a problem with the document, a request error like
	// parse and validation errors (graph/overhttp chooses the status).
	gqlerrcode.RegisterErrorType(errcode.QueryTooComplex, gqlerrcode.KindProtocol)
}

// Config holds the maximums; 0 turns a limit off. Start from DefaultConfig.
type Config struct {
	MaxDepth      int
	MaxAliases    int
	MaxRootFields int
	MaxCost       int
	// MaxTokens is the parser's token limit (handler.Server.SetParserTokenLimit),
	// enforced by the parser; see TokenLimit.
	MaxTokens int
	// ListEstimate is the assumed length of a list that has no `first`. An
	// estimate, not a limit: 0 means DefaultListEstimate.
	ListEstimate int
	// MaxSelections and MaxDirectives bound the document as written, before
	// validation (document.go).
	MaxSelections int
	MaxDirectives int
	// MaxRepresentations bounds the representations of `_entities` in one
	// operation (all its `_entities` fields together); 0 = no limit.
	MaxRepresentations int
}

// DefaultConfig returns the default limits.
func DefaultConfig() Config {
	return Config{
		MaxDepth:      DefaultMaxDepth,
		MaxAliases:    DefaultMaxAliases,
		MaxRootFields: DefaultMaxRootFields,
		MaxCost:       DefaultMaxCost,
		MaxTokens:     DefaultMaxTokens,
		ListEstimate:  DefaultListEstimate,
		MaxSelections: DefaultMaxSelections,
		MaxDirectives: DefaultMaxDirectives,

		MaxRepresentations: DefaultMaxRepresentations,
	}
}

// Stats is what Measure finds in one operation.
type Stats struct {
	Depth      int
	Aliases    int
	RootFields int
	Cost       int
	// Representations is the number of representations given to
	// `_entities` (Federation).
	Representations int
	// Truncated reports that the walk stopped at its work budget; Cost is
	// then a lower bound.
	Truncated bool
}

// Options of Measure.
type Options struct {
	ListEstimate int
	// Schema measures the introspection fields (SizeOf); nil counts their
	// lists as ListEstimate elements.
	Schema *SchemaSize
}

// Measure walks op (validated against its schema, so field definitions are
// set) with fragments expanded and returns its statistics. vars are the
// operation's coerced variables.
func Measure(op *ast.OperationDefinition, vars map[string]any, o Options) Stats {
	if o.ListEstimate <= 0 {
		o.ListEstimate = DefaultListEstimate
	}
	w := &walker{vars: vars, opts: o, walk: walk.Walker{Budget: walkBudget}}
	var s Stats
	s.Cost, s.Depth = w.selectionSet(op.SelectionSet, 1, "", 0)
	s.RootFields = w.roots
	s.Aliases = w.aliases
	s.Representations = w.representations
	s.Truncated = w.walk.Exhausted()
	if s.Truncated && s.Cost < walkBudget {
		s.Cost = walkBudget
	}
	return s
}

type walker struct {
	vars    map[string]any
	opts    Options
	walk    walk.Walker // fragments expanded, not inside themselves; at most walkBudget selections
	roots   int
	aliases int
	// representations given to `_entities`
	representations int
}

// selectionSet returns the cost of one instance of the object holding set and
// the depth below it (counting its own fields as level depth). parent is the
// holding type's name; connFirst the `first` of the connection holding it.
func (w *walker) selectionSet(set ast.SelectionSet, depth int, parent string, connFirst int) (cost, maxDepth int) {
	return w.selections(set, depth, parent, connFirst, "")
}

// selections is selectionSet measuring, when only is set, the part of set
// that applies to an object of type only: its fragments on another type
// are left out (an abstract type's selection, `_entities`'s).
func (w *walker) selections(set ast.SelectionSet, depth int, parent string, connFirst int, only string) (cost, maxDepth int) {
	w.walk.Walk(set, walk.Visitor{
		Field: func(f *ast.Field) bool {
			c, d := w.field(f, depth, parent, connFirst)
			cost += c
			maxDepth = max(maxDepth, d)
			return false // field measures what it selects
		},
		Fragment: func(f walk.Fragment) bool {
			return only == "" || f.TypeCondition == "" || f.TypeCondition == only || f.TypeCondition == entityUnion
		},
	})
	return cost, maxDepth
}

func (w *walker) field(f *ast.Field, depth int, parent string, connFirst int) (cost, maxDepth int) {
	if depth == 1 {
		w.roots++
	}
	if f.Alias != "" && f.Alias != f.Name {
		w.aliases++
	}
	if f.Name == "__typename" {
		return 0, depth
	}
	if f.Name == "__schema" || f.Name == "__type" {
		return w.introspectionCost(f), depth
	}
	if f.Name == entitiesField && depth == 1 && f.Definition != nil {
		return w.entities(f, depth)
	}
	if len(f.SelectionSet) == 0 || f.Definition == nil {
		return 0, depth // scalar or enum
	}
	typ := f.Definition.Type
	mult := 1
	if typ.Elem != nil {
		mult = w.opts.ListEstimate
		if strings.HasSuffix(parent, "Connection") && connFirst > 0 {
			mult = connFirst
		}
	}
	childFirst := 0
	if def := f.Definition.Arguments.ForName("first"); def != nil {
		childFirst = w.first(f, def)
	}
	c, d := w.selectionSet(f.SelectionSet, depth+1, typ.Name(), childFirst)
	return sat(mult, 1+c), max(depth, d)
}

// first returns the value of f's `first` argument as the resolver gets it:
// a literal, a variable (the coerced value, in any numeric form the
// coercion leaves: int, int64, float64, json.Number), or the definition's
// default when the argument or its variable is absent or null, as
// ast.ArgumentMap and the paging do. A value the strict Int scalar refuses
// (a string, a fraction) never reaches a resolver; it counts as the list
// estimate here and CheckVariables refuses the operation.
func (w *walker) first(f *ast.Field, def *ast.ArgumentDefinition) int {
	var v any
	if a := f.Arguments.ForName("first"); a != nil {
		if a.Value.Kind == ast.Variable {
			v = w.vars[a.Value.Raw]
		} else if x, err := a.Value.Value(w.vars); err == nil {
			v = x
		}
	}
	if v == nil && def.DefaultValue != nil {
		v, _ = def.DefaultValue.Value(nil)
	}
	if n, ok := scalars.IntValue(v); ok {
		return n
	}
	return w.opts.ListEstimate
}

// CheckVariables refuses an operation whose Int variables hold values the
// GraphQL spec's Int coercion refuses (gqlparser's variable coercion lets a
// string such as "500" through). It answers BAD_USER_INPUT naming the
// variable, before execution, so such an operation costs no upstream call
// and the cost is always measured from the values the resolvers will use.
func CheckVariables(op *ast.OperationDefinition, vars map[string]any) *gqlerror.Error {
	for _, d := range op.VariableDefinitions {
		v, ok := vars[d.Variable]
		if !ok || !holdsInt(d.Type) {
			continue
		}
		if bad, ok := badInt(d.Type, v); !ok {
			return gqlerr.New(errcode.BadUserInput, fmt.Sprintf("variable $%s: Int must be a whole number between -2147483648 and 2147483647, got %s", d.Variable, bad),
				map[string]any{"field": "$" + d.Variable})
		}
	}
	return nil
}

func holdsInt(t *ast.Type) bool {
	for t.Elem != nil {
		t = t.Elem
	}
	return t.NamedType == "Int"
}

// badInt checks v against t (Int or a list of Int, at any depth) and
// describes the first refused value.
func badInt(t *ast.Type, v any) (string, bool) {
	if v == nil {
		return "", true // nullability is checked by the variable coercion
	}
	if t.Elem != nil {
		if l, ok := v.([]any); ok {
			for _, x := range l {
				if d, ok := badInt(t.Elem, x); !ok {
					return d, false
				}
			}
			return "", true
		}
		return badInt(t.Elem, v) // a single value coerced to a list
	}
	if _, ok := scalars.IntValue(v); ok {
		return "", true
	}
	if s, ok := v.(string); ok {
		return fmt.Sprintf("the string %.40q", s), false
	}
	return fmt.Sprintf("%.40v", v), false
}

// sat multiplies without overflow.
func sat(a, b int) int {
	const ceiling = 1 << 40
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > ceiling/b {
		return ceiling
	}
	return a * b
}

// Error returns the QUERY_TOO_COMPLEX error for limit (one of the names
// above) with the value found and the maximum.
func Error(limit string, value, maximum int) *gqlerror.Error {
	return gqlerr.New(errcode.QueryTooComplex, fmt.Sprintf("the operation exceeds the %s limit: %d, maximum %d", limit, value, maximum),
		map[string]any{"limit": limit, "value": value, "maximum": maximum})
}

// TokenLimit rewrites the parser's "exceeded token limit" error into the
// QUERY_TOO_COMPLEX vocabulary; other errors are returned unchanged.
func TokenLimit(e *gqlerror.Error, maxTokens int) *gqlerror.Error {
	if e == nil || maxTokens <= 0 || !strings.HasPrefix(e.Message, "exceeded token limit of ") {
		return e
	}
	out := Error(Tokens, maxTokens+1, maxTokens)
	out.Message = fmt.Sprintf("the operation exceeds the tokens limit: more than %d tokens", maxTokens)
	out.Locations = e.Locations
	delete(out.Extensions, "value")
	return out
}

// Extension is the gqlgen handler extension enforcing the limits.
type Extension struct {
	cfg  Config
	docs graphql.Cache[*ast.QueryDocument] // nil: parse every document
	size *SchemaSize                       // the schema's, set by Validate
}

// New returns the extension enforcing c.
func New(c Config) *Extension { return &Extension{cfg: c} }

// UseQueryCache lets x count the document limits on the parsed document of
// docs, the server's query cache (handler.Server.SetQueryCache), instead of
// parsing the query again: a repeated query then costs no parse before
// gqlgen's own cache hit. Call it before serving; it returns x.
func (x *Extension) UseQueryCache(docs graphql.Cache[*ast.QueryDocument]) *Extension {
	x.docs = docs
	return x
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = (*Extension)(nil)

// ExtensionName implements graphql.HandlerExtension.
func (*Extension) ExtensionName() string { return "OperationLimits" }

// Validate implements graphql.HandlerExtension: gqlgen calls it once, when
// the extension is installed, with the schema whose introspection it
// measures (SizeOf).
func (x *Extension) Validate(es graphql.ExecutableSchema) error {
	x.size = SizeOf(es.Schema())
	return nil
}

const statsKey = "OperationLimits"

// MutateOperationContext measures the operation and refuses it when a limit
// is exceeded. It runs after validation, before any resolver.
func (x *Extension) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	if e := CheckVariables(opCtx.Operation, opCtx.Variables); e != nil {
		return e
	}
	s := Measure(opCtx.Operation, opCtx.Variables, Options{ListEstimate: x.cfg.ListEstimate, Schema: x.size})
	opCtx.Stats.SetExtension(statsKey, &s)
	c := x.cfg
	switch {
	case c.MaxRootFields > 0 && s.RootFields > c.MaxRootFields:
		return Error(RootFields, s.RootFields, c.MaxRootFields)
	case c.MaxAliases > 0 && s.Aliases > c.MaxAliases:
		return Error(Aliases, s.Aliases, c.MaxAliases)
	case c.MaxDepth > 0 && s.Depth > c.MaxDepth:
		return Error(Depth, s.Depth, c.MaxDepth)
	case c.MaxRepresentations > 0 && s.Representations > c.MaxRepresentations:
		return Error(Representations, s.Representations, c.MaxRepresentations)
	case c.MaxCost > 0 && (s.Cost > c.MaxCost || s.Truncated):
		// A truncated walk's cost is a lower bound above any sane maximum.
		return Error(Cost, s.Cost, c.MaxCost)
	}
	return nil
}

// StatsFrom returns the statistics measured for the operation of ctx, or nil.
func StatsFrom(ctx context.Context) *Stats {
	if !graphql.HasOperationContext(ctx) {
		return nil
	}
	return Of(graphql.GetOperationContext(ctx))
}

// Of returns the statistics measured for oc, or nil: for the operation
// context mutators that run after the extension (graph/admission), before
// the operation context is in the request context.
func Of(oc *graphql.OperationContext) *Stats {
	s, _ := oc.Stats.GetExtension(statsKey).(*Stats)
	return s
}
