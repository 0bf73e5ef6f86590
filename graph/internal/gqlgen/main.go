// Command gqlgen is the facade's gqlgen: it runs gqlgen's generate (with
// ../gqlgen.yml, found by walking up) and then lets the generated executor run
// inline what cannot wait for the network (graph/inline):
//
//   - graph/generated/inline.go lists the fields that may block: every
//     resolver field of a non-root object except those in nonBlocking below;
//   - in graph/generated/generated.go, a non-root object's resolver field
//     that cannot block runs at once (runInline) and the others, unless
//     deferred, are resolved together by the object's blocking list (one
//     goroutine each but the first, as FieldSet.Dispatch does, without its
//     closures) instead of out.Concurrently(i, ...);
//     graphql.MarshalSliceConcurrently(ctx, ...) becomes
//     inlineTable.MarshalSlice(ctx, sel, ...);
//   - allocations gqlgen makes for every object or field whatever the query
//     are left out: an object's deferred-group path is computed only when it
//     has deferred fragments; a leaf field's Child (and its "does not have
//     child fields" error) is one per type (in inline.go), not made anew; an
//     object's FieldSet, values and Marshaler are one allocation
//     (inlineTable.NewFieldSet), written without FieldSet.MarshalGQL (an
//     iterator, a pointer per field and a map per object); its deferred
//     FieldSet and labels are made only when a field is deferred; its fields
//     are collected through the execution context's inline.Collected; its
//     __typename is a Marshaler made once per type; a resolver field that
//     runs inline is resolved by runInline, without the closures gqlgen
//     makes for a field it may start on a goroutine (objects.go); an
//     object-typed field's Child is one per type and execution
//     (inline.ChildOf), not a closure per field; the input unmarshaler map
//     is built once, not per operation;
//   - when the operation's resolver root allows it (leaf.Enabled: the
//     handler has no field interceptor, which must see every field), the
//     fields of non-root objects skip graphql.ResolveField (plain.go): a
//     plain leaf field (a struct field of a scalar or enum type whose value
//     graph/leaf writes exactly as gqlgen's marshaler does) returns
//     graph/leaf's Marshaler of the value, or takes gqlgen's path for a
//     value leaf cannot write (nil in a non-null field, NaN, an unreadable
//     DateTime), which reports it as before; another struct field is
//     marshalled with its field context and recovery; a resolver field's
//     resolver is called with its field context, an error added on its
//     path; those field contexts and their context values are one
//     allocation (inline.NewFieldContext, filled by the field's
//     fieldContextIn_ function). gqlgen's resolution stays, as <field
//     function>Slow.
//
// Every rewrite checks the shape of what it rewrites and fails generation
// when gqlgen's output differs.
//
// graph/generate.go runs it (go generate ./...); it never runs go mod tidy
// (skip_mod_tidy in gqlgen.yml).
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
)

// nonBlocking are the resolver fields that never wait for an upstream call:
// they build their result from the parent object. A field is listed here only
// when its resolver (graph/schema.resolvers.go) makes no call, directly or
// through a loader; one that may load must not be (siblings would wait for
// it in turn). Generation fails on a name that is not a resolver field.
var nonBlocking = []string{
	"Company.location", "CreditNote.location", "CreditNoteLine.location",
	"Event.location", "Invoice.location", "InvoiceItem.location",
	"Order.location", "Post.location", "Product.location",
	"Redemption.location", "Resource.location", "Transaction.location",
	"Visit.location", "VisitRequest.location",
	"CreditNote.lines", "Invoice.items",
	"Invoice.baseAmounts", "Invoice.company", "Invoice.customer", "Invoice.customerAddress",
	"Invoice.payments", "Invoice.taxes", "Invoice.transaction", "Invoice.user",
	"Resource.image", "Resource.autoRelease", "Resource.checkIn", "Resource.confirmationEmail",
	"Resource.credits", "Resource.money", "Resource.dynamicPricing", "Resource.duration",
	"Resource.externalCalendar", "Resource.plans", "Resource.schedule",
	"InvoiceItem.booking", "InvoiceItem.order", "InvoiceItem.ticket",
	"Transaction.booking", "Transaction.order", "Transaction.ticket",
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		return err
	}
	t := &table{}
	if err := api.Generate(cfg, api.AddPlugin(t)); err != nil {
		return err
	}
	if t.err != nil {
		return t.err
	}
	return rewrite(cfg.Exec.Filename, t.blocking, t.plain)
}

// table is a gqlgen plugin collecting the fields that may block from the
// codegen data, before the executor is generated.
type table struct {
	blocking []string
	plain    []plainField
	err      error
}

func (*table) Name() string { return "inline" }

// GenerateCode implements plugin.CodeGenerator.
func (t *table) GenerateCode(data *codegen.Data) error {
	concurrent := map[string]bool{}
	for _, o := range data.Objects {
		if o.Root {
			continue
		}
		for _, f := range o.Fields {
			if f.IsConcurrent() {
				concurrent[o.Name+"."+f.Name] = true
			}
		}
	}
	for _, f := range nonBlocking {
		if !concurrent[f] {
			t.err = fmt.Errorf("nonBlocking names %s, which is not a resolver field of an object", f)
			return t.err
		}
		delete(concurrent, f)
	}
	for f := range concurrent {
		t.blocking = append(t.blocking, f)
	}
	slices.Sort(t.blocking)
	for _, o := range data.Objects {
		if o.Root || strings.HasPrefix(o.Name, "__") {
			continue
		}
		for _, f := range o.Fields {
			if p, ok := plainOf(f); ok {
				t.plain = append(t.plain, p)
			}
		}
	}
	return nil
}

// The generated calls rewritten, each with what replaces it.
var rewrites = []struct{ from, to string }{
	{"out.Concurrently(i, func(ctx context.Context) graphql.Marshaler { return innerFunc(ctx, out) })",
		"inlineTable.Concurrently(ctx, out, i, field, func(ctx context.Context) graphql.Marshaler { return innerFunc(ctx, out) })"},
	{"graphql.MarshalSliceConcurrently(ctx, ", "inlineTable.MarshalSlice(ctx, sel, "},
	{"\tout := graphql.NewFieldSet(fields)\n\tdeferredFieldSet := graphql.NewFieldSet(nil)\n\tdeferLabelToView := make(map[string]*graphql.FieldSetView)\n",
		"\tout, object := inlineTable.NewFieldSet(fields)\n\tdeferredFieldSet, deferLabelToView := inlineTable.Deferred(fields)\n"},
	{"\n\treturn out\n}\n", "\n\treturn object\n}\n"},
	// The first response of a query is written into a buffer of the size
	// of the document's last one (inline.ResponseSize).
	{"\t\t\t\tdata = ec._Query(ctx, opCtx.Operation.SelectionSet)\n\t\t\t} else {",
		"\t\t\t\tdata = ec._Query(ctx, opCtx.Operation.SelectionSet)\n\t\t\t\tvar buf bytes.Buffer\n" +
			"\t\t\t\tbuf.Grow(inline.ResponseSize(opCtx.Doc))\n\t\t\t\tdata.MarshalGQL(&buf)\n" +
			"\t\t\t\tinline.SetResponseSize(opCtx.Doc, buf.Len())\n\t\t\t\tresponse.Data = buf.Bytes()\n" +
			"\t\t\t\tif atomic.LoadInt32(&ec.Deferred) > 0 {\n\t\t\t\t\thasNext := atomic.LoadInt32(&ec.PendingDeferred) > 0\n" +
			"\t\t\t\t\tresponse.HasNext = &hasNext\n\t\t\t\t}\n" +
			"\t\t\t\treturn &response\n\t\t\t} else {"},
	// Exec's first-response flag is a field of the execution context
	// (started, added by rewriteChildren), not a variable the response
	// closure captures (an allocation per operation).
	{"\t)\n\tfirst := true\n\n\tswitch opCtx.Operation.Operation {\n", "\t)\n\n\tswitch opCtx.Operation.Operation {\n"},
	{"\t\t\tif first {\n\t\t\t\tfirst = false\n", "\t\t\tif !ec.started {\n\t\t\t\tec.started = true\n"},
	{"\t\t\tif !first {\n\t\t\t\treturn nil\n\t\t\t}\n\t\t\tfirst = false\n",
		"\t\t\tif ec.started {\n\t\t\t\treturn nil\n\t\t\t}\n\t\t\tec.started = true\n"},
	{"Path:     graphql.GetPath(ctx),\n\t\tFieldSet: deferredFieldSet,",
		"Path:     inlineTable.DeferredPath(ctx, deferLabelToView),\n\t\tFieldSet: deferredFieldSet,"},
}

// noChild matches a leaf field's context, whose Child gqlgen makes anew
// (with its error) for every field resolved.
var noChild = regexp.MustCompile(`graphql\.NewScalarFieldContext\(("[A-Za-z0-9_]+", field, (?:true|false), (?:true|false)), errors\.New\("field of type ([A-Za-z0-9_]+) does not have child fields"\)\)`)

func rewrite(execFile string, blocking []string, plain []plainField) error {
	src, err := os.ReadFile(execFile)
	if err != nil {
		return err
	}
	for _, r := range rewrites {
		if !bytes.Contains(src, []byte(r.from)) {
			return fmt.Errorf("%s: no %q to rewrite: gqlgen's templates changed, update graph/internal/gqlgen", execFile, r.from)
		}
		src = bytes.ReplaceAll(src, []byte(r.from), []byte(r.to))
	}
	// Every object made by inlineTable.NewFieldSet returns its Marshaler.
	if made, returned := bytes.Count(src, []byte("out, object := inlineTable.NewFieldSet(fields)")), bytes.Count(src, []byte("\n\treturn object\n}\n")); made != returned {
		return fmt.Errorf("%s: %d objects made by inlineTable.NewFieldSet, %d returned: gqlgen's templates changed, update graph/internal/gqlgen", execFile, made, returned)
	}
	leafTypes := map[string]bool{}
	for _, m := range noChild.FindAllSubmatch(src, -1) {
		leafTypes[string(m[2])] = true
	}
	if len(leafTypes) == 0 {
		return fmt.Errorf("%s: no leaf field error to rewrite: gqlgen's templates changed, update graph/internal/gqlgen", execFile)
	}
	src = noChild.ReplaceAll(src, []byte("inlineTable.ScalarFieldContext($1, noChildFields$2)"))
	src, enums, err := rewritePlain(src, plain)
	if err != nil {
		return fmt.Errorf("%s: %w", execFile, err)
	}
	src, typenames, err := rewriteObjects(src)
	if err != nil {
		return fmt.Errorf("%s: %w", execFile, err)
	}
	src, children, err := rewriteChildren(src)
	if err != nil {
		return fmt.Errorf("%s: %w", execFile, err)
	}
	src, unmarshalers, err := rewriteUnmarshalerMap(src)
	if err != nil {
		return fmt.Errorf("%s: %w", execFile, err)
	}
	if !bytes.Contains(src, []byte("errors.")) {
		src = bytes.Replace(src, []byte("\t\"errors\"\n"), nil, 1)
	}
	src, err = format.Source(src)
	if err != nil {
		return fmt.Errorf("%s after rewriting: %w", execFile, err)
	}
	if err := os.WriteFile(execFile, src, 0o644); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("// Code generated by graph/internal/gqlgen, DO NOT EDIT.\n\npackage generated\n\n")
	b.WriteString("import (\n\t\"context\"\n\t\"reflect\"\n\t\"sync\"\n\t\"sync/atomic\"\n\n\t\"github.com/99designs/gqlgen/graphql\"\n\n")
	b.WriteString("\t\"github.com/workspacenet/facade/graph/inline\"\n\t\"github.com/workspacenet/facade/graph/leaf\"\n)\n\n")
	b.WriteString("// inlineTable lists the resolver fields that may wait for an upstream call.\n")
	b.WriteString("var inlineTable = inline.NewTable(\n")
	for _, f := range blocking {
		fmt.Fprintf(&b, "\t%q,\n", f)
	}
	b.WriteString(")\n\n// The Child of a leaf field's FieldContext, one per type.\nvar (\n")
	types := slices.Sorted(maps.Keys(leafTypes))
	for _, t := range types {
		fmt.Fprintf(&b, "\tnoChildFields%s = inline.NoChildFields(%q)\n", t, t)
	}
	b.WriteString(")\n")
	b.WriteString("\n// The enums written by graph/leaf, from gqlgen's name maps.\nvar (\n")
	for _, m := range enums {
		fmt.Fprintf(&b, "\t%s = leaf.NewEnum(%s)\n", enumVar(m), m)
	}
	b.WriteString(")\n\n// Each object's __typename, made once.\nvar (\n")
	for _, t := range typenames {
		fmt.Fprintf(&b, "\ttypename%s = leaf.Const(%q)\n", t, t)
	}
	b.WriteString(")\n")
	b.WriteString("\n// The slots of executionContext.children, one per object type.\nconst (\n")
	for i, t := range children {
		if i == 0 {
			fmt.Fprintf(&b, "\tchild%s = iota\n", t)
		} else {
			fmt.Fprintf(&b, "\tchild%s\n", t)
		}
	}
	b.WriteString("\tchildTypes\n)\n")
	b.WriteString("\n// inputUnmarshalMap is the input unmarshaler map every operation's\n" +
		"// context carries (graphql.WithUnmarshalerMap), built once: the unmarshal\n" +
		"// functions read nothing from their execution context but each other,\n" +
		"// so they are those of an empty one.\n" +
		"var inputUnmarshalMap = func() map[reflect.Type]reflect.Value {\n\tec := &executionContext{}\n\treturn graphql.BuildUnmarshalerMap(\n")
	for _, f := range unmarshalers {
		fmt.Fprintf(&b, "\t\tec.%s,\n", f)
	}
	b.WriteString("\t)\n}()\n")
	b.WriteString(runInlineSource)
	out, err := format.Source([]byte(b.String()))
	if err != nil {
		return err
	}
	dir := execFile[:strings.LastIndex(execFile, "/")+1]
	return os.WriteFile(dir+"inline.go", out, 0o644)
}
