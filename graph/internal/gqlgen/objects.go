package main

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
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
//     gqlgen makes first; one that may block and is not deferred is added to
//     the object's blocking list (rewriteDispatch);
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
		"\t\t\t\tout.Values[i] = runInline(ec, ctx, field, obj, (*executionContext).$3, out)\n\t\t\t\tcontinue\n\t\t\t}\n"+
		"\t\t\tif !field.IsDeferred() {\n\t\t\t\tlater.add(i, (*executionContext).$3)\n\t\t\t\tcontinue\n\t\t\t}\n$2"))
	src, err := rewriteDispatch(src)
	if err != nil {
		return nil, nil, err
	}

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

// objectHead matches the head of an object's resolution function, naming
// the Go type of the object.
var objectHead = regexp.MustCompile(`\nfunc \(ec \*executionContext\) _[_A-Za-z0-9]+\(ctx context\.Context, sel ast\.SelectionSet, obj ([^)\n]+)\) graphql\.Marshaler \{\n`)

// rewriteDispatch lets every object whose resolver fields may block (those
// rewritten by rewriteObjects to later.add) resolve them with its
// blocking list (runInlineSource) instead of FieldSet.Concurrently and
// Dispatch: the same goroutines, without the two closures per field, the
// slice of them and the closure per goroutine gqlgen makes. A deferred
// field keeps gqlgen's path (the deferred FieldSet), so the object's own
// Concurrently call is left with nothing to do and removed.
func rewriteDispatch(src []byte) ([]byte, error) {
	const (
		concurrently = "\n\t\t\tinlineTable.Concurrently(ctx, out, i, field, func(ctx context.Context) graphql.Marshaler { return innerFunc(ctx, out) })\n"
		made         = "\tout, object := inlineTable.NewFieldSet(fields)\n"
		dispatch     = "\n\tout.Dispatch(ctx)\n"
	)
	heads := objectHead.FindAllSubmatchIndex(src, -1)
	var b bytes.Buffer
	last, rewritten := 0, 0
	for k, h := range heads {
		end := len(src)
		if k+1 < len(heads) {
			end = heads[k+1][0]
		}
		body := src[h[1]:end]
		n := bytes.Count(body, []byte("later.add(i, "))
		if n == 0 {
			continue
		}
		if bytes.Count(body, []byte(concurrently)) != n || bytes.Count(body, []byte(made)) != 1 || bytes.Count(body, []byte(dispatch)) != 1 {
			return nil, fmt.Errorf("object function at byte %d: resolver fields, their Concurrently calls, FieldSet or Dispatch not as expected: gqlgen's templates changed, update graph/internal/gqlgen", h[0])
		}
		body = bytes.ReplaceAll(body, []byte(concurrently), []byte("\n"))
		body = bytes.Replace(body, []byte(made), []byte(made+"\tvar later blocking["+string(src[h[2]:h[3]])+"]\n"), 1)
		body = bytes.Replace(body, []byte(dispatch), []byte("\n\tlater.dispatch(ec, ctx, fields, obj, out)\n"), 1)
		b.Write(src[last:h[1]])
		b.Write(body)
		last = end
		rewritten += n
	}
	b.Write(src[last:])
	if total := bytes.Count(src, []byte("later.add(i, ")); rewritten == 0 || rewritten != total {
		return nil, fmt.Errorf("%d of %d blocking resolver fields in object functions: gqlgen's templates changed, update graph/internal/gqlgen", rewritten, total)
	}
	return b.Bytes(), nil
}

// runInlineSource is the generated runInline, and an object's list of the
// resolver fields that may block.
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

// blocking lists the resolver fields of an object that may block: each is
// resolved by dispatch as gqlgen's FieldSet.Dispatch resolves the fields
// given to FieldSet.Concurrently (the first on this goroutine, each other on
// a goroutine of its own, all waited for), by runInline, without a closure
// per field and goroutine. Its zero value is empty; it lives on the object
// function's stack.
type blocking[O any] struct {
	n     int
	first [4]blockingField[O]
	more  []blockingField[O]
}

type blockingField[O any] struct {
	i int // the field's index in the object's fields
	f func(*executionContext, context.Context, graphql.CollectedField, O) graphql.Marshaler
}

func (b *blocking[O]) add(i int, f func(*executionContext, context.Context, graphql.CollectedField, O) graphql.Marshaler) {
	if b.n < len(b.first) {
		b.first[b.n] = blockingField[O]{i, f}
	} else {
		b.more = append(b.more, blockingField[O]{i, f})
	}
	b.n++
}

func (b *blocking[O]) at(k int) blockingField[O] {
	if k < len(b.first) {
		return b.first[k]
	}
	return b.more[k-len(b.first)]
}

// dispatch resolves the fields into fs.Values and waits for them.
func (b *blocking[O]) dispatch(ec *executionContext, ctx context.Context, fields []graphql.CollectedField, obj O, fs *graphql.FieldSet) {
	switch b.n {
	case 0:
		return
	case 1:
		fs.Values[b.first[0].i] = runInline(ec, ctx, fields[b.first[0].i], obj, b.first[0].f, fs)
		return
	}
	var wg sync.WaitGroup
	wg.Add(b.n - 1)
	for k := 1; k < b.n; k++ {
		e := b.at(k)
		go func() {
			defer wg.Done()
			fs.Values[e.i] = runInline(ec, ctx, fields[e.i], obj, e.f, fs)
		}()
	}
	e := b.at(0)
	fs.Values[e.i] = runInline(ec, ctx, fields[e.i], obj, e.f, fs)
	wg.Wait()
}
`

// childClosure matches the Child of an object-typed field's context: a
// closure of the execution context gqlgen makes for every such field
// resolved.
var childClosure = regexp.MustCompile(`Child: func\(ctx context\.Context, field graphql\.CollectedField\) \(\*graphql\.FieldContext, error\) \{\n\t\t\treturn ec\.childFields_([A-Za-z0-9_]+)\(ctx, field\)\n\t\t\},\n`)

// rewriteChildren makes every object-typed field's Child one per type and
// execution (inline.ChildOf, a slot of the execution context's children).
// It returns the types, in slot order.
func rewriteChildren(src []byte) ([]byte, []string, error) {
	var types []string
	for _, m := range childClosure.FindAllSubmatch(src, -1) {
		types = append(types, string(m[1]))
	}
	if len(types) == 0 || len(types) != bytes.Count(src, []byte("return ec.childFields_")) {
		return nil, nil, fmt.Errorf("%d Child closures for %d calls of childFields functions: gqlgen's templates changed, update graph/internal/gqlgen", len(types), bytes.Count(src, []byte("return ec.childFields_")))
	}
	slices.Sort(types)
	types = slices.Compact(types)
	src = childClosure.ReplaceAll(src, []byte("Child: inline.ChildOf(&ec.children[child$1], func() inline.ChildFunc {\n"+
		"\t\t\treturn func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {\n"+
		"\t\t\t\treturn ec.childFields_$1(ctx, field)\n\t\t\t}\n\t\t}),\n"))
	const from = "\tcollected inline.Collected\n}"
	if bytes.Count(src, []byte(from)) != 1 {
		return nil, nil, fmt.Errorf("not exactly one %q to rewrite: update graph/internal/gqlgen", from)
	}
	src = bytes.Replace(src, []byte(from), []byte("\tcollected inline.Collected\n"+
		"\t// children holds the Child of object-typed fields' contexts, one per\n\t// type (inline.ChildOf).\n"+
		"\tchildren [childTypes]atomic.Pointer[inline.Child]\n"+
		"\t// started: the operation's first response was made (Exec).\n\tstarted bool\n}"), 1)
	return src, types, nil
}

// unmarshalerMap matches the input unmarshaler map gqlgen's Exec builds for
// every operation.
var unmarshalerMap = regexp.MustCompile(`\tinputUnmarshalMap := graphql\.BuildUnmarshalerMap\(\n((?:\t\tec\.unmarshalInput[A-Za-z0-9_]+,\n)+)\t\)\n`)

// ecUse matches what a generated function reads from its execution context.
var ecUse = regexp.MustCompile(`\bec\.[A-Za-z0-9_]+`)

// rewriteUnmarshalerMap moves the input unmarshaler map out of Exec: it is
// built once (inputUnmarshalMap, in inline.go) from the unmarshal functions
// of an empty execution context. That holds only while the unmarshal
// functions read nothing from it but other unmarshal functions (no
// directive, resolver or operation state), which it checks. It returns the
// map's functions, in gqlgen's order.
func rewriteUnmarshalerMap(src []byte) ([]byte, []string, error) {
	ms := unmarshalerMap.FindAllSubmatch(src, -1)
	if len(ms) != 1 {
		return nil, nil, fmt.Errorf("%d input unmarshaler maps built: gqlgen's templates changed, update graph/internal/gqlgen", len(ms))
	}
	var fns []string
	for _, l := range bytes.Split(bytes.TrimSpace(ms[0][1]), []byte("\n")) {
		fns = append(fns, strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(l)), "ec."), ","))
	}
	const head = "\nfunc (ec *executionContext) unmarshal"
	bodies := 0
	for rest := src; ; {
		i := bytes.Index(rest, []byte(head))
		if i < 0 {
			break
		}
		rest = rest[i+1:]
		end := bytes.Index(rest, []byte("\n}\n"))
		if end < 0 {
			return nil, nil, fmt.Errorf("unterminated unmarshal function")
		}
		body := rest[:end]
		for _, u := range ecUse.FindAll(body, -1) {
			if !bytes.HasPrefix(u, []byte("ec.unmarshal")) {
				line := body[:bytes.IndexByte(body, '(')]
				return nil, nil, fmt.Errorf("%s reads %s: the input unmarshaler map cannot be built once; update graph/internal/gqlgen", line, u)
			}
		}
		bodies++
		rest = rest[end:]
	}
	if bodies < len(fns) {
		return nil, nil, fmt.Errorf("%d unmarshal functions found for %d in the map: update graph/internal/gqlgen", bodies, len(fns))
	}
	return unmarshalerMap.ReplaceAll(src, nil), fns, nil
}
