package main

import (
	"bytes"
	"fmt"
	"go/types"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/codegen"
	"github.com/vektah/gqlparser/v2/ast"
)

// plainField is a struct field read without a resolver, arguments or
// directives. When it is of a scalar or enum type graph/leaf writes (helper
// set), its function returns leaf's Marshaler; else it marshals the value
// with the field's context as graphql.ResolveField would, without the
// closures, the middleware chain and the boxing of the value.
type plainField struct {
	fn       string // the generated field function, _Object_field
	resolver bool   // a resolver field: called with the field's context
	goField  string // the struct field read, as gqlgen's resolver reads it
	ptr      bool   // the Go field is a pointer (else its address is taken)
	nonNull  bool
	marshal  string // gqlgen's marshal function of the field's type
	// helper is graph/leaf's function of the value; enum: the name map.
	helper string
	enum   bool
	// calls are what gqlgen's marshal function must call for leaf's writing
	// to be the same (one of them).
	calls []string
}

// leafScalars are the scalars graph/leaf writes: their Go type (the element
// type when the field is a pointer), leaf's function, and the marshaller
// gqlgen's generated marshal function must call for it.
var leafScalars = map[string]struct {
	goType, helper string
	calls          []string
}{
	"String":   {"string", "leaf.String", []string{"graphql.MarshalString(*v)", "graphql.MarshalString(v)"}},
	"ID":       {"string", "leaf.String", []string{"graphql.MarshalID(*v)", "graphql.MarshalID(v)"}},
	"Float":    {"float64", "leaf.Float", []string{"graphql.MarshalFloatContext(*v)", "graphql.MarshalFloatContext(v)"}},
	"Int":      {"int", "leaf.Int", []string{"scalars.MarshalInt(*v)", "scalars.MarshalInt(v)"}},
	"Boolean":  {"bool", "leaf.Boolean", []string{"graphql.MarshalBoolean(*v)", "graphql.MarshalBoolean(v)"}},
	"DateTime": {"github.com/workspacenet/facade/restclient.Timestamp", "leaf.DateTime", []string{"scalars.MarshalDateTime(*v)", "scalars.MarshalDateTime(v)"}},
	"JSON":     {"encoding/json.RawMessage", "leaf.JSON", []string{"scalars.MarshalJSON(*v)", "scalars.MarshalJSON(v)"}},
}

// plainOf reports whether f is a plain field graph/leaf can write, and how.
func plainOf(f *codegen.Field) (plainField, bool) {
	ref := f.TypeReference
	if f.IsReserved() || f.HasDirectives() || f.Stream || f.IsBatch() || ref == nil || ref.Definition == nil ||
		ref.IsOmittable || types.IsInterface(ref.GO) {
		// An interface value (a union's) may be nil as an interface, which
		// resolveField reports its own way: left to it. Directives that do
		// not run (@deprecated) do not count: the generated field has no
		// middleware (checked in rewritePlain).
		return plainField{}, false
	}
	if f.IsResolver {
		return plainField{fn: "_" + f.Object.Name + "_" + f.Name, resolver: true, nonNull: ref.GQL.NonNull, marshal: ref.MarshalFunc()}, true
	}
	if len(f.Args) > 0 || f.GoFieldType != codegen.GoFieldVariable {
		return plainField{}, false
	}
	p := plainField{
		fn:      "_" + f.Object.Name + "_" + f.Name,
		goField: f.GoFieldName,
		nonNull: ref.GQL.NonNull,
		marshal: ref.MarshalFunc(),
	}
	if ref.IsSlice() || ref.GQL.Elem != nil || ref.IsPtrToPtr() {
		return p, true // a list: marshalled with the field's context
	}
	t := ref.GO
	if ptr, ok := t.(*types.Pointer); ok {
		p.ptr, t = true, ptr.Elem()
	}
	switch ref.Definition.Kind {
	case ast.Scalar:
		if s, ok := leafScalars[ref.Definition.Name]; ok && types.TypeString(t, nil) == s.goType {
			p.helper, p.calls = s.helper, s.calls
		}
	case ast.Enum:
		// Only enums bound with enum_values: gqlgen writes
		// graphql.MarshalString(nameMap[v]), the map named as the function.
		if b, ok := t.Underlying().(*types.Basic); ok && b.Kind() == types.String && ref.HasEnumValues() {
			p.enum, p.helper = true, ref.MarshalFunc()
			p.calls = []string{"graphql.MarshalString(" + p.marshal + "[*v])", "graphql.MarshalString(" + p.marshal + "[v])"}
		}
	}
	return p, true
}

// enumVar is the name of the leaf.Enum made from gqlgen's name map m.
func enumVar(m string) string { return "leaf" + strings.TrimPrefix(m, "marshal") }

// The generated code a plain field's function starts with, and what it
// becomes.
const (
	fieldFuncTail = "(ctx context.Context, field graphql.CollectedField, obj *"
	fieldBodyHead = ") (ret graphql.Marshaler) {\n\treturn graphql.ResolveField(\n"
)

// rewritePlain lets every plain field's function return graph/leaf's
// Marshaler first, and adds the execution context's flag (leaf.Enabled, per
// operation) and the import. It fails when the generated code is not shaped
// as it expects: a field function that does not read the field as plainOf
// says, a marshal function that does not call the marshaller leaf writes as.
// It returns the enum name maps the code refers to (see enumVar).
func rewritePlain(src []byte, plain []plainField) ([]byte, []string, error) {
	if len(plain) == 0 {
		return nil, nil, fmt.Errorf("no plain field found: gqlgen's codegen data changed, update graph/internal/gqlgen")
	}
	for _, r := range []struct{ from, to string }{
		{"type executionContext struct {\n\t*graphql.ExecutionContextState[ResolverRoot, DirectiveRoot, ComplexityRoot]\n}",
			"type executionContext struct {\n\t*graphql.ExecutionContextState[ResolverRoot, DirectiveRoot, ComplexityRoot]\n" +
				"\t// plainFields: plain leaf fields are written by graph/leaf, not resolved\n" +
				"\t// through graphql.ResolveField (leaf.Enabled).\n\tplainFields bool\n}"},
		{"\treturn &executionContext{\n\t\tExecutionContextState: ",
			"\treturn &executionContext{\n\t\tplainFields: leaf.Enabled(execSchema.Resolvers),\n\t\tExecutionContextState: "},
		{"\t\"github.com/workspacenet/facade/graph/model\"\n",
			"\t\"github.com/workspacenet/facade/graph/leaf\"\n\t\"github.com/workspacenet/facade/graph/model\"\n"},
	} {
		if bytes.Count(src, []byte(r.from)) != 1 {
			return nil, nil, fmt.Errorf("not exactly one %q to rewrite: gqlgen's templates changed, update graph/internal/gqlgen", r.from)
		}
		src = bytes.Replace(src, []byte(r.from), []byte(r.to), 1)
	}
	var enums, contexts []string
	for _, p := range plain {
		head := []byte("\nfunc (ec *executionContext) " + p.fn + fieldFuncTail)
		if bytes.Count(src, head) != 1 {
			return nil, nil, fmt.Errorf("no single field function %s", p.fn)
		}
		start := bytes.Index(src, head) + len(head)
		open := bytes.Index(src[start:], []byte(fieldBodyHead))
		end := bytes.Index(src[start:], []byte("\n}\n"))
		if open < 0 || end < open || bytes.IndexByte(src[start:start+open], '\n') >= 0 {
			return nil, nil, fmt.Errorf("field function %s does not start with graphql.ResolveField", p.fn)
		}
		body := src[start+open : start+end]
		if p.resolver {
			fast, err := resolverFast(p, body)
			if err != nil {
				return nil, nil, err
			}
			src = insertFast(src, p.fn, start, open, fast)
			contexts = append(contexts, p.fn[1:])
			continue
		}
		for _, want := range []string{
			"\t\t\treturn obj." + p.goField + ", nil\n\t\t},\n\t\tnil,\n",
			"\t\t\treturn ec." + p.marshal + "(ctx, selections, v)\n",
		} {
			if !bytes.Contains(body, []byte(want)) {
				return nil, nil, fmt.Errorf("field function %s lacks %q", p.fn, want)
			}
		}
		if p.helper == "" {
			// Marshalled with the field's context, as resolveField does
			// when no field middleware changes the value, and with its
			// recovery; fc.Result is not set (only field interceptors read
			// it, and they turn this path off).
			if !bytes.Contains(body, []byte("\t\t\treturn ec.fieldContext_"+p.fn[1:]+"(ctx, field)\n")) ||
				!bytes.Contains(src, []byte("\nfunc (ec *executionContext) "+p.marshal+"(ctx context.Context, sel ast.SelectionSet, v ")) {
				return nil, nil, fmt.Errorf("field function %s: no field context or marshal function %s", p.fn, p.marshal)
			}
			fast := fmt.Sprintf(`	if ec.plainFields && obj != nil {
		fctx, fc := inline.NewFieldContext(ctx)
		if err := ec.fieldContextIn_%s(ctx, field, fc); err != nil {
			return graphql.Null
		}
		ctx = fctx
		defer func() {
			if r := recover(); r != nil {
				ec.Error(ctx, ec.Recover(ctx, r))
				ret = graphql.Null
			}
		}()
		return ec.%s(ctx, field.Selections, obj.%s)
	}
`, p.fn[1:], p.marshal, p.goField)
			src = insertFast(src, p.fn, start, open, fast)
			contexts = append(contexts, p.fn[1:])
			continue
		}
		if err := checkMarshal(src, p); err != nil {
			return nil, nil, err
		}
		arg := "&obj." + p.goField
		if p.ptr {
			arg = "obj." + p.goField
		}
		call := p.helper + "(" + arg + ")"
		if p.enum {
			call = enumVar(p.helper) + ".Of(" + arg + ")"
			if !slices.Contains(enums, p.helper) {
				enums = append(enums, p.helper)
			}
		}
		cond := "m != nil"
		if p.nonNull {
			cond = "m != nil && m != graphql.Null"
		}
		fast := fmt.Sprintf("\tif ec.plainFields && obj != nil {\n\t\tif m := %s; %s {\n\t\t\treturn m\n\t\t}\n\t}\n", call, cond)
		src = insertFast(src, p.fn, start, open, fast)
	}
	slices.Sort(enums)
	for _, name := range contexts {
		var err error
		if src, err = fieldContextIn(src, name); err != nil {
			return nil, nil, err
		}
	}
	return src, enums, nil
}

// fieldContextIn splits the field context function of name (Object_field)
// in two: fieldContextIn_name fills a given FieldContext, keeping its
// Parent, so that the fast paths fill the one inline.NewFieldContext
// allocates with its context value; fieldContext_name, which gqlgen's code
// calls, fills a new one with it.
func fieldContextIn(src []byte, name string) ([]byte, error) {
	fail := func(what string) ([]byte, error) {
		return nil, fmt.Errorf("field context function fieldContext_%s: %s: gqlgen's templates changed, update graph/internal/gqlgen", name, what)
	}
	head := "\nfunc (ec *executionContext) fieldContext_" + name + "("
	const tail = " context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {\n"
	if bytes.Count(src, []byte(head)) != 1 {
		return fail("not exactly one")
	}
	start := bytes.Index(src, []byte(head)) + 1
	rest := string(src[start+len(head)-1:])
	ctxName, rest, ok := strings.Cut(rest, tail)
	if !ok || (ctxName != "ctx" && ctxName != "_") {
		return fail("unexpected signature")
	}
	end := strings.Index(rest, "\n}\n")
	if end < 0 {
		return fail("unterminated")
	}
	body := rest[:end+1]
	after := start + len(head) - 1 + len(ctxName) + len(tail) + end + len("\n}\n")
	const scalar = "\treturn inlineTable.ScalarFieldContext("
	switch {
	case strings.HasPrefix(body, scalar) && strings.Count(body, "\n") == 1:
		body = "\treturn inlineTable.FillScalarFieldContext(fc, " + body[len(scalar):]
	case strings.HasPrefix(body, "\tfc = &graphql.FieldContext{\n"):
		body = "\t*fc = graphql.FieldContext{\n\t\tParent: fc.Parent,\n" + body[len("\tfc = &graphql.FieldContext{\n"):]
		body = strings.ReplaceAll(body, "\treturn fc, err\n", "\treturn err\n")
		body = strings.ReplaceAll(body, "\treturn fc, nil\n", "\treturn nil\n")
		if strings.Contains(body, "return fc") || strings.Count(body, "fc = ") != 1 {
			return fail("fc returned or assigned other than as expected")
		}
	default:
		return fail("neither a FieldContext literal nor a scalar field's context")
	}
	out := "func (ec *executionContext) fieldContext_" + name + "(ctx context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {\n" +
		"\tfc = new(graphql.FieldContext)\n\treturn fc, ec.fieldContextIn_" + name + "(ctx, field, fc)\n}\n\n" +
		"func (ec *executionContext) fieldContextIn_" + name + "(" + ctxName + " context.Context, field graphql.CollectedField, fc *graphql.FieldContext) (err error) {\n" +
		body + "}\n"
	return slices.Concat(src[:start], []byte(out), src[after:]), nil
}

// insertFast makes fast the start of the field function fn, whose header
// ends at start+open (after "obj *", before its type's end): what follows
// fast becomes fn+"Slow", gqlgen's resolution through graphql.ResolveField,
// called when fast does not return. Kept apart, its closures do not enlarge
// the fast path's frame (goroutines' stacks grow less).
func insertFast(src []byte, fn string, start, open int, fast string) []byte {
	objType := string(src[start : start+open])
	at := start + open + len(") (ret graphql.Marshaler) {\n")
	split := fast + "\treturn ec." + fn + "Slow(ctx, field, obj)\n}\n\n" +
		"func (ec *executionContext) " + fn + "Slow(ctx context.Context, field graphql.CollectedField, obj *" + objType + ") (ret graphql.Marshaler) {\n"
	return slices.Insert(src, at, []byte(split)...)
}

// checkMarshal checks that gqlgen's marshal function of p's type writes the
// value with the marshaller graph/leaf writes as (and, for a nullable
// pointer, writes nil as graphql.Null); for an enum, that the name map
// exists.
func checkMarshal(src []byte, p plainField) error {
	head := []byte("\nfunc (ec *executionContext) " + p.marshal + "(ctx context.Context, sel ast.SelectionSet, v ")
	i := bytes.Index(src, head)
	if i < 0 {
		return fmt.Errorf("no marshal function %s (field %s)", p.marshal, p.fn)
	}
	end := bytes.Index(src[i+1:], []byte("\n}\n"))
	body := src[i : i+1+end]
	ok := false
	for _, c := range p.calls {
		ok = ok || bytes.Contains(body, []byte("res := "+c+"\n"))
	}
	if !ok {
		return fmt.Errorf("marshal function %s (field %s) calls none of %q", p.marshal, p.fn, p.calls)
	}
	if p.ptr && !p.nonNull && !bytes.Contains(body, []byte("\tif v == nil {\n\t\treturn graphql.Null\n\t}\n")) {
		return fmt.Errorf("marshal function %s (field %s) does not write nil as graphql.Null", p.marshal, p.fn)
	}
	if p.enum && !bytes.Contains(src, []byte("\t"+p.marshal+" = map[")) {
		return fmt.Errorf("no enum name map %s (field %s)", p.marshal, p.fn)
	}
	return nil
}

// resolverFast is the start of a resolver field's function: the resolver
// called with the field's context and its result marshalled as
// resolveField does when no field middleware runs (an error is added on the
// field's path and the field is null; fc.Result is not set). body is the
// function's ResolveField call, from which the resolver call, the result's
// type and the recovery are taken.
func resolverFast(p plainField, body []byte) (string, error) {
	const (
		resolverHead = "\t\tfunc(ctx context.Context) (any, error) {\n"
		resolverTail = "\t\t},\n\t\tnil,\n\t\tfunc(ctx context.Context, selections ast.SelectionSet, v "
		marshalHead  = ") graphql.Marshaler {\n\t\t\treturn ec." // then marshal(ctx, selections, v)
	)
	b := string(body)
	fail := func(what string) (string, error) {
		return "", fmt.Errorf("resolver field function %s: %s: gqlgen's templates changed, update graph/internal/gqlgen", p.fn, what)
	}
	if !strings.Contains(b, "\t\t\treturn ec.fieldContext_"+p.fn[1:]+"(ctx, field)\n") {
		return fail("no field context function")
	}
	i := strings.Index(b, resolverHead)
	j := strings.Index(b, resolverTail)
	if i < 0 || j < i {
		return fail("no resolver closure followed by a nil middleware chain")
	}
	call := b[i+len(resolverHead) : j]
	rest := b[j+len(resolverTail):]
	k := strings.Index(rest, marshalHead)
	if k < 0 {
		return fail("no marshal closure")
	}
	typ := rest[:k]
	rest = rest[k+len(marshalHead):]
	tail := p.marshal + "(ctx, selections, v)\n\t\t},\n\t\t"
	if !strings.HasPrefix(rest, tail) {
		return fail("marshal closure does not call " + p.marshal)
	}
	var recoverPanic bool
	switch rest[len(tail):] {
	case "true,\n\t\tfalse,\n\t)", "true,\n\t\ttrue,\n\t)":
		recoverPanic = true
	case "false,\n\t\tfalse,\n\t)", "false,\n\t\ttrue,\n\t)":
	default:
		return fail("no recoverFromPanic, nonNull arguments")
	}
	var fast strings.Builder
	fmt.Fprintf(&fast, `	if ec.plainFields {
		fctx, fc := inline.NewFieldContext(ctx)
		if err := ec.fieldContextIn_%s(ctx, field, fc); err != nil {
			return graphql.Null
		}
		ctx = fctx
`, p.fn[1:])
	if recoverPanic {
		fast.WriteString(`		defer func() {
			if r := recover(); r != nil {
				ec.Error(ctx, ec.Recover(ctx, r))
				ret = graphql.Null
			}
		}()
`)
	}
	fmt.Fprintf(&fast, `		res, err := func(ctx context.Context) (%s, error) {
	%s		}(ctx)
		if err != nil {
			ec.Error(ctx, graphql.AddFieldLocationToError(ctx, err))
			return graphql.Null
		}
		return ec.%s(ctx, field.Selections, res)
	}
`, typ, call, p.marshal)
	return fast.String(), nil
}
