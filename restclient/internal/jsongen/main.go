// Command jsongen writes restclient's generated JSON decoders
// (decode_gen.go): a dec_<Type> function for every struct type reachable
// from the root types named on the command line, the slab arena and the
// scratch buffers they use, and the fastOne/fastList/fastWhole entry points
// of the roots. It reads the package's Go files with go/ast (not reflect,
// so a stale generated file never stops it from running).
//
// Usage (from restclient's directory, by go generate):
//
//	go run ./internal/jsongen -o decode_gen.go [-lazy T,...] Root...
//
// -lazy names struct types that also get a lazy decoder (lazy_<Type>): it
// decodes their scalar fields as dec_<Type> does and validates every other
// field's value (objects, arrays, json.RawMessage) without decoding it,
// except a pointer to another -lazy type, decoded lazily in turn; it sets
// d.deferred when it left a value undecoded. A root among them also gets
// fastWholeLazy and parseOneLazy.
//
// It refuses field types it has no decoder for, embedded fields, two json
// names of one struct equal under case folding, types with their own
// UnmarshalJSON or UnmarshalText (other than Timestamp, a leaf), and a
// slice element type that can contain a slice of itself (the scratch
// buffers assume it cannot).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

type kind int

const (
	kString     kind = iota // string
	kPString                // *string
	kPNamedStr              // *T, T a string type
	kPFloat                 // *float64
	kPBool                  // *bool
	kPTimestamp             // *Timestamp
	kRaw                    // json.RawMessage
	kPStruct                // *S
	kSlice                  // []S
	kStrings                // []string
	kPtrSlice               // []*S
)

type field struct {
	goName, json string
	kind         kind
	elem         string // the struct or named string type
}

type gen struct {
	structs  map[string]*ast.StructType
	strTypes map[string]bool
	methods  map[string][]string // type -> method names
	fields   map[string][]field
	order    []string // generated struct types, sorted
	lazy     map[string]bool
}

func main() {
	out := flag.String("o", "decode_gen.go", "output file")
	lazy := flag.String("lazy", "", "comma-separated types that also get a lazy decoder")
	flag.Parse()
	roots := flag.Args()
	if len(roots) == 0 {
		log.Fatal("jsongen: name at least one root type")
	}
	g := &gen{structs: map[string]*ast.StructType{}, strTypes: map[string]bool{}, methods: map[string][]string{}, fields: map[string][]field{}, lazy: map[string]bool{}}
	if err := g.load(".", filepath.Base(*out)); err != nil {
		log.Fatal(err)
	}
	for _, r := range roots {
		if err := g.visit(r); err != nil {
			log.Fatal(err)
		}
	}
	if *lazy != "" {
		for _, t := range strings.Split(*lazy, ",") {
			if _, ok := g.fields[t]; !ok {
				log.Fatalf("jsongen: -lazy %s: not a type reached from the roots", t)
			}
			g.lazy[t] = true
		}
	}
	slices.Sort(g.order)
	if err := g.checkScratch(); err != nil {
		log.Fatal(err)
	}
	src, err := format.Source(g.emit(roots))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// load reads the type declarations and methods of the package in dir.
func (g *gen) load(dir, skip string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || filepath.Base(name) == skip {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					switch t := ts.Type.(type) {
					case *ast.StructType:
						g.structs[ts.Name.Name] = t
					case *ast.Ident:
						if t.Name == "string" {
							g.strTypes[ts.Name.Name] = true
						}
					}
				}
			case *ast.FuncDecl:
				if decl.Recv != nil && len(decl.Recv.List) == 1 {
					t := decl.Recv.List[0].Type
					if s, ok := t.(*ast.StarExpr); ok {
						t = s.X
					}
					if id, ok := t.(*ast.Ident); ok {
						g.methods[id.Name] = append(g.methods[id.Name], decl.Name.Name)
					}
				}
			}
		}
	}
	return nil
}

// visit collects the fields of struct type name and of every struct type
// they reach.
func (g *gen) visit(name string) error {
	if _, done := g.fields[name]; done {
		return nil
	}
	st, ok := g.structs[name]
	if !ok {
		return fmt.Errorf("jsongen: %s is not a struct type of the package", name)
	}
	for _, m := range g.methods[name] {
		if m == "UnmarshalJSON" || m == "UnmarshalText" {
			return fmt.Errorf("jsongen: %s has its own %s", name, m)
		}
	}
	var fs []field
	g.fields[name] = fs // mark before recursing
	g.order = append(g.order, name)
	folded := map[string]string{}
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			return fmt.Errorf("jsongen: %s: embedded fields are not supported", name)
		}
		tag := ""
		if f.Tag != nil {
			s, err := strconv.Unquote(f.Tag.Value)
			if err != nil {
				return err
			}
			tag = reflect.StructTag(s).Get("json")
		}
		for _, n := range f.Names {
			if !n.IsExported() {
				continue
			}
			jname, _, _ := strings.Cut(tag, ",")
			if jname == "-" && !strings.Contains(tag, ",") {
				continue
			}
			if jname == "" {
				jname = n.Name
			}
			fd, err := g.classify(name, n.Name, f.Type)
			if err != nil {
				return err
			}
			fd.goName, fd.json = n.Name, jname
			if prev, dup := folded[strings.ToUpper(jname)]; dup {
				return fmt.Errorf("jsongen: %s: json names %q and %q are equal under case folding", name, prev, jname)
			}
			folded[strings.ToUpper(jname)] = jname
			fs = append(fs, fd)
		}
	}
	g.fields[name] = fs
	for _, fd := range fs {
		if fd.kind == kPStruct || fd.kind == kSlice || fd.kind == kPtrSlice {
			if err := g.visit(fd.elem); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *gen) classify(owner, fname string, t ast.Expr) (field, error) {
	bad := func() (field, error) {
		return field{}, fmt.Errorf("jsongen: %s.%s: no decoder for type %s", owner, fname, types(t))
	}
	switch t := t.(type) {
	case *ast.Ident:
		if t.Name == "string" {
			return field{kind: kString}, nil
		}
	case *ast.SelectorExpr:
		if types(t) == "json.RawMessage" {
			return field{kind: kRaw}, nil
		}
	case *ast.StarExpr:
		id, ok := t.X.(*ast.Ident)
		if !ok {
			return bad()
		}
		switch {
		case id.Name == "string":
			return field{kind: kPString}, nil
		case id.Name == "float64":
			return field{kind: kPFloat}, nil
		case id.Name == "bool":
			return field{kind: kPBool}, nil
		case id.Name == "Timestamp":
			return field{kind: kPTimestamp}, nil
		case g.strTypes[id.Name] && !hasUnmarshal(g.methods[id.Name]):
			return field{kind: kPNamedStr, elem: id.Name}, nil
		case g.structs[id.Name] != nil:
			return field{kind: kPStruct, elem: id.Name}, nil
		}
	case *ast.ArrayType:
		if t.Len != nil {
			return bad()
		}
		switch e := t.Elt.(type) {
		case *ast.Ident:
			if e.Name == "string" {
				return field{kind: kStrings}, nil
			}
			if g.structs[e.Name] != nil {
				return field{kind: kSlice, elem: e.Name}, nil
			}
		case *ast.StarExpr:
			if id, ok := e.X.(*ast.Ident); ok && g.structs[id.Name] != nil {
				return field{kind: kPtrSlice, elem: id.Name}, nil
			}
		}
	}
	return bad()
}

func hasUnmarshal(ms []string) bool {
	return slices.Contains(ms, "UnmarshalJSON") || slices.Contains(ms, "UnmarshalText")
}

func types(t ast.Expr) string {
	var b bytes.Buffer
	_ = format.Node(&b, token.NewFileSet(), t)
	return b.String()
}

// checkScratch refuses a slice element type whose decoding can reach a
// slice of the same type: decodeSlice decodes elements in place in the
// type's scratch buffer, which a nested slice of the type would move.
func (g *gen) checkScratch() error {
	for _, name := range g.order {
		for _, f := range g.fields[name] {
			if f.kind != kSlice {
				continue
			}
			seen := map[string]bool{}
			var reach func(t string) bool
			reach = func(t string) bool {
				if seen[t] {
					return false
				}
				seen[t] = true
				for _, c := range g.fields[t] {
					if c.kind == kSlice && c.elem == f.elem {
						return true
					}
					if (c.kind == kPStruct || c.kind == kSlice || c.kind == kPtrSlice) && reach(c.elem) {
						return true
					}
				}
				return false
			}
			if reach(f.elem) {
				return fmt.Errorf("jsongen: %s can contain a []%[1]s", f.elem)
			}
		}
	}
	return nil
}

func (g *gen) emit(roots []string) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("// Code generated by jsongen (go generate); DO NOT EDIT.\n\npackage restclient\n\nimport \"unsafe\"\n\n")
	p("// Slab kinds, one per pointer target type.\nconst (\n\tslab_string_ slabKind = iota\n\tslab_float64_\n\tslab_bool_\n\tslab_Timestamp\n")
	for _, n := range g.order {
		p("\tslab_%s\n", n)
	}
	p("\tnumSlabKinds\n)\n\n")
	p("// arena holds the slabs of one document.\ntype arena struct {\n\tstring_ slab[string]\n\tfloat64_ slab[float64]\n\tbool_ slab[bool]\n\tTimestamp slab[Timestamp]\n")
	for _, n := range g.order {
		p("\t%s slab[%[1]s]\n", n)
	}
	p("}\n\n")
	p("// release notes in h (nil after a failure) the counts the document\n// needed of the kinds it used, and drops their slabs.\n")
	p("func (a *arena) release(used []slabKind, h *slabHints) {\n\tfor _, k := range used {\n\t\tswitch k {\n")
	for _, n := range append([]string{"string_", "float64_", "bool_", "Timestamp"}, g.order...) {
		p("\t\tcase slab_%s:\n\t\t\th.note(k, a.%[1]s.used)\n\t\t\ta.%[1]s = slab[%s]{}\n", n, strings.TrimSuffix(n, "_"))
	}
	p("\t\t}\n\t}\n}\n\n")
	elems := []string{"string_"}
	for _, n := range g.order {
		for _, f := range g.fields[n] {
			if f.kind == kSlice && !slices.Contains(elems, f.elem) {
				elems = append(elems, f.elem)
			}
		}
	}
	slices.Sort(elems[1:])
	p("// scratch holds the elements of the slices being decoded, by type.\ntype scratch struct {\n")
	for _, e := range elems {
		t := e
		if e == "string_" {
			t = "string"
		}
		p("\t%s []%s\n", e, t)
	}
	p("}\n\n// truncate empties the buffers (after a failed decoding: decodeSlice\n// clears what it used when it succeeds).\nfunc (s *scratch) truncate() {\n")
	for _, e := range elems {
		p("\tclear(s.%s)\n\ts.%[1]s = s.%[1]s[:0]\n", e)
	}
	p("}\n\n")
	for _, n := range g.order {
		g.emitStruct(&b, n, false)
		if g.lazy[n] {
			g.emitStruct(&b, n, true)
		}
	}
	for _, r := range roots {
		p("var hints_%s_one, hints_%[1]s_list, hints_%[1]s_whole slabHints\n\n", r)
		p("func (*%s) fastOne(key string) parseFunc {\n\treturn fastParseOne(key, &hints_%[1]s_one, (*decoder).new_%[1]s, (*decoder).dec_%[1]s)\n}\n\n", r)
		p("func (*%s) fastList(key string) parseFunc {\n\treturn fastParseList(key, &hints_%[1]s_list, (*decoder).new_%[1]s, (*decoder).dec_%[1]s)\n}\n\n", r)
		p("func (v *%s) fastWhole(data []byte) error {\n\treturn fastDecodeWhole(data, &hints_%[1]s_whole, v, (*decoder).dec_%[1]s)\n}\n\n", r)
		if g.lazy[r] {
			p("var hints_%s_lazy slabHints\n\n", r)
			p("func (v *%s) fastWholeLazy(data []byte) (deferred bool, err error) {\n\treturn fastDecodeLazy(data, &hints_%[1]s_lazy, v, (*decoder).lazy_%[1]s)\n}\n\n", r)
			p("var hints_%s_lazy_one slabHints\n\n", r)
			p("func (*%s) parseOneLazy(key string, data []byte) (*%[1]s, bool, error) {\n\treturn parseOneDeferred(data, key, &hints_%[1]s_lazy_one, (*decoder).new_%[1]s, (*decoder).lazy_%[1]s)\n}\n\n", r)
		}
	}
	p("var _ = unsafe.Pointer(nil)\n")
	return b.Bytes()
}

// emitStruct writes dec_<n> (and new_<n>, fold_<n>), or lazy_<n> when lazy.
func (g *gen) emitStruct(b *bytes.Buffer, n string, lazy bool) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	fs := g.fields[n]
	fn := "dec_" + n
	if lazy {
		fn = "lazy_" + n
		p("// lazy_%s is dec_%[1]s that validates, without decoding, the values of\n// the fields that are not scalars (a -lazy type's are decoded lazily).\n", n)
	} else {
		p("func (d *decoder) new_%s() *%[1]s { return d.a.%[1]s.one(d, slab_%[1]s) }\n\n", n)
		p("var fold_%s = [...]string{", n)
		for i, f := range fs {
			if i > 0 {
				p(", ")
			}
			p("%q", f.json)
		}
		p("}\n\n")
		p("// dec_%s decodes an object into *v (null: unchanged).\n", n)
	}
	p("func (d *decoder) %s(v *%s) {\n", fn, n)
	p("\tif !d.objStart() {\n\t\treturn\n\t}\n\tfor {\n\t\tk := d.key()\n\tagain:\n\t\tswitch k {\n")
	for _, f := range fs {
		p("\t\tcase %q:\n", f.json)
		if lazy {
			switch {
			case f.kind == kPStruct && g.lazy[f.elem]:
				p("\t\t\tif d.null() {\n\t\t\t\tv.%s = nil\n\t\t\t} else {\n\t\t\t\tif v.%[1]s == nil {\n\t\t\t\t\tv.%[1]s = d.new_%[2]s()\n\t\t\t\t}\n\t\t\t\td.lazy_%[2]s(v.%[1]s)\n\t\t\t}\n", f.goName, f.elem)
				continue
			case f.kind == kPStruct || f.kind == kSlice || f.kind == kStrings || f.kind == kPtrSlice || f.kind == kRaw:
				p("\t\t\td.skip()\n\t\t\td.deferred = true\n")
				continue
			}
		}
		switch f.kind {
		case kString:
			p("\t\t\td.string_(&v.%s)\n", f.goName)
		case kPString:
			p("\t\t\td.pstring(&v.%s)\n", f.goName)
		case kPNamedStr:
			p("\t\t\td.pstring((**string)(unsafe.Pointer(&v.%s))) // *%s has string's layout\n", f.goName, f.elem)
		case kPFloat:
			p("\t\t\td.pfloat64(&v.%s)\n", f.goName)
		case kPBool:
			p("\t\t\td.pbool(&v.%s)\n", f.goName)
		case kPTimestamp:
			p("\t\t\td.ptimestamp(&v.%s)\n", f.goName)
		case kRaw:
			p("\t\t\td.rawMessage(&v.%s)\n", f.goName)
		case kPStruct:
			p("\t\t\tif d.null() {\n\t\t\t\tv.%s = nil\n\t\t\t} else {\n\t\t\t\tif v.%[1]s == nil {\n\t\t\t\t\tv.%[1]s = d.new_%[2]s()\n\t\t\t\t}\n\t\t\t\td.dec_%[2]s(v.%[1]s)\n\t\t\t}\n", f.goName, f.elem)
		case kSlice:
			p("\t\t\tdecodeSlice(d, &v.%s, &d.sc.%s, &d.a.%[2]s, slab_%[2]s, (*decoder).dec_%[2]s)\n", f.goName, f.elem)
		case kStrings:
			p("\t\t\tdecodeSlice(d, &v.%s, &d.sc.string_, &d.a.string_, slab_string_, stringElem)\n", f.goName)
		case kPtrSlice:
			p("\t\t\tdecodePtrSlice(d, &v.%s, (*decoder).new_%s, (*decoder).dec_%[2]s)\n", f.goName, f.elem)
		}
	}
	p("\t\tdefault:\n\t\t\tif f := foldField(k, fold_%s[:]); f != \"\" {\n\t\t\t\tk = f\n\t\t\t\tgoto again\n\t\t\t}\n\t\t\td.skip()\n\t\t}\n", n)
	p("\t\tif !d.objNext() {\n\t\t\treturn\n\t\t}\n\t}\n}\n\n")
}
