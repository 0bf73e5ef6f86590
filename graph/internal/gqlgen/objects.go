package main

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
)

// concurrentField matches the start of an object's case for a resolver
// field, up to its innerFunc (gqlgen's object template), naming the field
// function it calls.
var concurrentField = regexp.MustCompile(`(\t\tcase "[_A-Za-z0-9]+":\n)(\t\t\tfield := field\n\n` +
	`\t\t\tinnerFunc := func\(ctx context\.Context, fs \*graphql\.FieldSet\) \(res graphql\.Marshaler\) \{\n` +
	`\t\t\t\tdefer func\(\) \{\n\t\t\t\t\tif r := recover\(\); r != nil \{\n\t\t\t\t\t\tec\.Error\(ctx, ec\.Recover\(ctx, r\)\)\n\t\t\t\t\t\}\n\t\t\t\t\}\(\)\n` +
	`\t\t\t\tres = ec\.(_[_A-Za-z0-9]+)\(ctx, field, obj\)\n` +
	`\t\t\t\tif res == graphql\.RequiredNull \{\n\t\t\t\t\tatomic\.AddUint32\(&fs\.Invalids, 1\)\n\t\t\t\t\}\n\t\t\t\treturn res\n\t\t\t\}\n)`)

// typenameCase matches an object's __typename, which gqlgen writes with a
// Marshaler (a closure) made anew for every object.
var typenameCase = regexp.MustCompile(`\t\tcase "__typename":\n\t\t\tout\.Values\[i\] = graphql\.MarshalString\("([_A-Za-z0-9]+)"\)\n`)

// rewriteObjects rewrites, in every object's resolution:
//   - a resolver field that runs inline (inlineTable.Inline: not deferred,
//     cannot block) is resolved by runInline, as its innerFunc would be,
//     without the copy of the field, the innerFunc and Concurrently closures
//     gqlgen makes first;
//   - the fields are collected through the execution context's
//     inline.Collected;
//   - __typename is a Marshaler made once per type (typename<Type>).
//
// It returns the types whose __typename the code refers to.
func rewriteObjects(src []byte) ([]byte, []string, error) {
	inlineCalls := bytes.Count(src, []byte("inlineTable.Concurrently(ctx, out, i, field, "))
	if n := len(concurrentField.FindAllIndex(src, -1)); n == 0 || n != inlineCalls {
		return nil, nil, fmt.Errorf("%d resolver field cases of objects for %d inlineTable.Concurrently calls: gqlgen's templates changed, update graph/internal/gqlgen", n, inlineCalls)
	}
	src = concurrentField.ReplaceAll(src, []byte("$1\t\t\tif inlineTable.Inline(field.Field, field.IsDeferred()) {\n"+
		"\t\t\t\tout.Values[i] = runInline(ec, ctx, field, obj, (*executionContext).$3, out)\n\t\t\t\tcontinue\n\t\t\t}\n$2"))

	const collect = "\tfields := graphql.CollectFields(ec.OperationContext, sel, "
	objects := bytes.Count(src, []byte("out, object := inlineTable.NewFieldSet(fields)"))
	if n := bytes.Count(src, []byte(collect)); n != objects {
		return nil, nil, fmt.Errorf("%d objects, %d collect their fields as expected: gqlgen's templates changed, update graph/internal/gqlgen", objects, n)
	}
	src = bytes.ReplaceAll(src, []byte(collect), []byte("\tfields := ec.collected.Fields(ec.OperationContext, sel, "))
	for _, r := range []struct{ from, to string }{
		{"\tplainFields bool\n}", "\tplainFields bool\n\t// collected caches the operation's collected fields.\n\tcollected inline.Collected\n}"},
		{"\t\"github.com/workspacenet/facade/graph/leaf\"\n", "\t\"github.com/workspacenet/facade/graph/inline\"\n\t\"github.com/workspacenet/facade/graph/leaf\"\n"},
	} {
		if bytes.Count(src, []byte(r.from)) != 1 {
			return nil, nil, fmt.Errorf("not exactly one %q to rewrite: update graph/internal/gqlgen", r.from)
		}
		src = bytes.Replace(src, []byte(r.from), []byte(r.to), 1)
	}

	var typenames []string
	for _, m := range typenameCase.FindAllSubmatch(src, -1) {
		typenames = append(typenames, string(m[1]))
	}
	if len(typenames) != objects {
		return nil, nil, fmt.Errorf("%d objects, %d write __typename as expected: gqlgen's templates changed, update graph/internal/gqlgen", objects, len(typenames))
	}
	src = typenameCase.ReplaceAll(src, []byte("\t\tcase \"__typename\":\n\t\t\tout.Values[i] = typename$1\n"))
	slices.Sort(typenames)
	return src, slices.Compact(typenames), nil
}

// runInlineSource is the generated runInline.
const runInlineSource = `
// runInline resolves an object's resolver field f on this goroutine, as the
// field's innerFunc does on a goroutine of its own: with its recovery, and
// a RequiredNull counted in fs.Invalids.
func runInline[O any](ec *executionContext, ctx context.Context, field graphql.CollectedField, obj O, f func(*executionContext, context.Context, graphql.CollectedField, O) graphql.Marshaler, fs *graphql.FieldSet) (res graphql.Marshaler) {
	defer func() {
		if r := recover(); r != nil {
			ec.Error(ctx, ec.Recover(ctx, r))
		}
	}()
	res = f(ec, ctx, field, obj)
	if res == graphql.RequiredNull {
		atomic.AddUint32(&fs.Invalids, 1)
	}
	return res
}
`
