package limits

import (
	"math"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/workspacenet/facade/graph/walk"
)

// SchemaSize holds the numbers an introspection selection (__schema,
// __type) is measured with: those of the schema it describes, computed once
// (SizeOf) when the extension is installed. A list under __schema counts its
// real length (types, directives); a list of one __Type (fields,
// inputFields, enumValues, interfaces, possibleTypes) or one __Field's or
// __Directive's args counts its mean length over the schema, so that
// `types { fields { ... } }` counts every field of the schema once; an
// ofType counts as the share of the schema's type references wrapped (in
// NON_NULL or LIST) that many times. The cost of a selection is then close
// to the number of objects its answer holds: GraphiQL's introspection query
// costs about what its answer holds, and each further __schema as much
// again.
type SchemaSize struct {
	types, directives float64
	typeLists         map[string]float64 // __Type's list fields: mean length per type
	fieldArgs         float64            // mean args of a __Field
	directiveArgs     float64            // mean args of a __Directive
	// wrapped[k] is the share of type references wrapped more than k
	// times: the chance that the (k+1)-th ofType of a chain is an object.
	wrapped []float64
}

// SizeOf counts s as gqlgen's introspection answers it (deprecated fields
// and values included: the most a selection can get).
func SizeOf(s *ast.Schema) *SchemaSize {
	z := &SchemaSize{typeLists: map[string]float64{"fields": 0, "inputFields": 0, "enumValues": 0, "interfaces": 0, "possibleTypes": 0}}
	var fields, args, dirArgs float64
	var wraps []int // wraps[n]: type references wrapped n times
	ref := func(t *ast.Type) {
		n := 0
		for ; t != nil; t = t.Elem {
			if t.NonNull {
				n++
			}
			if t.Elem != nil {
				n++
			}
		}
		for len(wraps) <= n {
			wraps = append(wraps, 0)
		}
		wraps[n]++
	}
	for _, d := range s.Types {
		z.types++
		switch d.Kind {
		case ast.Object, ast.Interface:
			for _, f := range d.Fields {
				if strings.HasPrefix(f.Name, "__") {
					continue
				}
				fields++
				args += float64(len(f.Arguments))
				ref(f.Type)
				for _, a := range f.Arguments {
					ref(a.Type)
				}
			}
			z.typeLists["interfaces"] += float64(len(d.Interfaces))
		case ast.InputObject:
			z.typeLists["inputFields"] += float64(len(d.Fields))
			for _, f := range d.Fields {
				ref(f.Type)
			}
		case ast.Enum:
			z.typeLists["enumValues"] += float64(len(d.EnumValues))
		}
		if d.Kind == ast.Interface || d.Kind == ast.Union {
			z.typeLists["possibleTypes"] += float64(len(s.GetPossibleTypes(d)))
		}
	}
	for _, d := range s.Directives {
		z.directives++
		dirArgs += float64(len(d.Arguments))
		for _, a := range d.Arguments {
			ref(a.Type)
		}
	}
	z.typeLists["fields"] = fields
	if z.types > 0 {
		for k, v := range z.typeLists {
			z.typeLists[k] = v / z.types
		}
	}
	if fields > 0 {
		z.fieldArgs = args / fields
	}
	if z.directives > 0 {
		z.directiveArgs = dirArgs / z.directives
	}
	total := 0
	for _, n := range wraps {
		total += n
	}
	for k := 0; k+1 < len(wraps); k++ {
		above := 0
		for _, n := range wraps[k+1:] {
			above += n
		}
		z.wrapped = append(z.wrapped, float64(above)/float64(max(total, 1)))
	}
	return z
}

// length returns how many objects the list (or object) field name of the
// introspection type parent holds, and the ofType level of its children.
// Without a SchemaSize (nil), a list counts as estimate elements and an
// ofType as an object.
func (z *SchemaSize) length(parent, name string, isList bool, level, estimate int) (n float64, childLevel int) {
	if z == nil {
		if isList {
			return float64(estimate), 0
		}
		return 1, level + 1
	}
	switch {
	case parent == "__Schema" && name == "types":
		return z.types, 0
	case parent == "__Schema" && name == "directives":
		return z.directives, 0
	case parent == "__Type" && name == "ofType":
		if level < len(z.wrapped) {
			return z.wrapped[level], level + 1
		}
		return 0, level + 1
	case parent == "__Type":
		if v, ok := z.typeLists[name]; ok {
			return v, 0
		}
	case parent == "__Field" && name == "args":
		return z.fieldArgs, 0
	case parent == "__Directive" && name == "args":
		return z.directiveArgs, 0
	}
	if isList {
		return float64(estimate), 0
	}
	return 1, 0
}

// introspection returns the cost of the objects set selects inside one
// object of the introspection type parent (level: how many ofType lead to
// it).
func (w *walker) introspection(set ast.SelectionSet, parent string, level int) float64 {
	cost := 0.0
	w.walk.Walk(set, walk.Visitor{Field: func(s *ast.Field) bool {
		if len(s.SelectionSet) == 0 || s.Definition == nil {
			return false // scalars, enums, __typename
		}
		typ := s.Definition.Type
		n, next := w.opts.Schema.length(parent, s.Name, typ.Elem != nil, level, w.opts.ListEstimate)
		if n > 0 {
			cost += n * (1 + w.introspection(s.SelectionSet, typ.Name(), next))
		}
		return false
	}})
	return cost
}

// introspectionCost is the cost of the root introspection field f (__schema
// or __type): its own object and what it selects.
func (w *walker) introspectionCost(f *ast.Field) int {
	typ := ""
	if f.Definition != nil {
		typ = f.Definition.Type.Name()
	}
	c := 1 + w.introspection(f.SelectionSet, typ, 0)
	return int(math.Ceil(min(c, 1<<40)))
}
