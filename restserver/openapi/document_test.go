package openapi_test

// The document's own tests: they parse it with kin-openapi through
// openapitest, so they live in the external test package (openapitest
// imports openapi).

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/openapi"
	"github.com/workspacenet/facade/restserver/openapi/openapitest"
	"github.com/workspacenet/facade/restserver/wire"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestDocumentLoadsAndValidates(t *testing.T) {
	doc := load(t)
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	for _, name := range []string{"basic", "bearer"} {
		if doc.Components.SecuritySchemes[name] == nil {
			t.Errorf("security scheme %s missing", name)
		}
	}
	if !json.Valid(openapi.Document()) {
		t.Fatal("Document() is not JSON")
	}
}

func TestExactlyTheDocumentedOperations(t *testing.T) {
	// The operations of the API (restclient's table) and the token endpoint.
	want := []string{"POST /oauth2/token"}
	for _, op := range restclient.Operations() {
		want = append(want, op.Pattern())
	}
	doc := load(t)
	var got []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			got = append(got, method+" "+path)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("operations:\n got %q\nwant %q", got, want)
	}
}

func TestEveryOperationDocumentsErrorsAndWrapping(t *testing.T) {
	doc := load(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			codes := []string{"400", "401", "429", "5XX"}
			// A list filtered by an unknown id is empty, not 404, and no
			// read conflicts: 404 only where a path names a record, 409
			// only on writes.
			byID := strings.Contains(path, "{")
			if path != "/oauth2/token" {
				codes = append(codes, "403")
				if byID || method != "GET" {
					codes = append(codes, "404")
				} else if op.Responses.Value("404") != nil {
					t.Errorf("%s: a list documents 404", name)
				}
				if method != "GET" {
					codes = append(codes, "409")
				} else if op.Responses.Value("409") != nil {
					t.Errorf("%s: a read documents 409", name)
				}
				hasNet := false
				for _, p := range op.Parameters {
					if p.Value.In == "header" && p.Value.Name == "service-network-id" {
						hasNet = true
						if p.Value.Required != (path == restclient.OpGetEvent.Route) {
							t.Errorf("%s: service-network-id required=%v", name, p.Value.Required)
						}
					}
				}
				if !hasNet {
					t.Errorf("%s: no service-network-id header parameter", name)
				}
			}
			for _, c := range codes {
				r := op.Responses.Value(c)
				if r == nil {
					t.Errorf("%s: no %s response", name, c)
					continue
				}
				s := r.Value.Content.Get("application/json").Schema.Value
				if _, ok := s.Properties["message"]; !ok || !slices.Contains(s.Required, "type") {
					t.Errorf("%s %s: not the error body", name, c)
				}
			}
			okCode := "200"
			if method == "POST" && path != "/oauth2/token" {
				okCode = "201"
			}
			r := op.Responses.Value(okCode)
			if r == nil {
				t.Errorf("%s: no %s response", name, okCode)
				continue
			}
			if path == "/oauth2/token" {
				continue
			}
			s := r.Value.Content.Get("application/json").Schema.Value
			wantKeys := 1
			if path == restclient.OpListInvoiceItems.Route {
				wantKeys = 2 // invoice and invoiceItems
			}
			if len(s.Required) != wantKeys || s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
				t.Errorf("%s: success body must be closed and wrap a single required key, got required %v", name, s.Required)
			}
			for k := range s.Properties {
				if k != s.Required[0] && k != "nextPageToken" && k != "searchQueryNext" && !(k == "invoiceItems" && path == restclient.OpListInvoiceItems.Route) {
					t.Errorf("%s: unexpected top-level key %q", name, k)
				}
			}
		}
	}
}

// TestSchemasMatchWireTypes checks, for the client's wire types (restclient)
// and for the service's own (restserver/wire) alike, that every documented
// property exists, with a compatible type, in the type of the same object,
// and that the full objects document every field the type has. The object
// each operation answers is compared on both sides: the client's type is
// its row's answer; the service's must be in the map below.
func TestSchemasMatchWireTypes(t *testing.T) {
	doc := load(t)
	// answered returns the component the answer of op holds under its Key,
	// "" for none.
	answered := func(op restclient.Operation) string {
		d := doc.Paths.Find(op.Route).GetOperation(op.Method)
		for code, r := range d.Responses.Map() {
			if !strings.HasPrefix(code, "2") {
				continue
			}
			p := r.Value.Content.Get("application/json").Schema.Value.Properties[op.Key]
			if p != nil && p.Value.Items != nil {
				p = p.Value.Items
			}
			if p != nil && p.Ref != "" {
				return p.Ref[strings.LastIndex(p.Ref, "/")+1:]
			}
		}
		return ""
	}
	// The client's components that no operation answers under its key
	// (those that one does are added below, from the table).
	client := map[string]any{
		"Tax": restclient.Tax{}, "User": restclient.User{}, "Visitor": restclient.Visitor{}, "Address": restclient.Address{},
		"Discount": restclient.Discount{}, "ItemPayment": restclient.ItemPayment{}, "Company": restclient.Company{},
		"PriceSplit": restclient.PriceSplit{}, "CreditNoteLine": restclient.CreditNoteLine{},
		"Invoice": restclient.Invoice{}, "InvoiceItem": restclient.InvoiceItem{}, "ProductOption": restclient.ProductOption{},
		"CreditNoteCreate": restclient.CreditNoteCreateRequest{}, "BookingCreate": restclient.BookingCreateRequest{},
		"VisitCreate": restclient.VisitCreateRequest{}, "VisitUpdate": restclient.VisitUpdateRequest{},
		"VisitRequestCreate": restclient.VisitRequestCreateRequest{}, "PostCreate": restclient.PostCreateRequest{},
		"PostUpdate": restclient.PostUpdateRequest{},
	}
	service := map[string]any{
		"Tax": wire.Tax{}, "User": wire.User{}, "Visitor": wire.Visitor{}, "Address": wire.Address{},
		"Discount": wire.Discount{}, "ItemPayment": wire.ItemPayment{}, "Company": wire.Company{},
		"PriceSplit": wire.PriceSplit{}, "CreditNote": wire.CreditNote{}, "CreditNoteLine": wire.CreditNoteLine{},
		"Booking": wire.Booking{}, "Resource": wire.Resource{}, "Visit": wire.Visit{},
		"VisitRequest": wire.VisitRequest{}, "Post": wire.Post{}, "Comment": wire.Comment{},
		"Invoice": wire.Invoice{}, "InvoiceItem": wire.InvoiceItem{}, "Transaction": wire.Transaction{},
		"Product": wire.Product{}, "ProductOption": wire.ProductOption{}, "Order": wire.Order{},
		"Redemption": wire.Redemption{}, "Event": wire.Event{},
		"CreditNoteCreate": wire.CreditNoteCreateRequest{}, "BookingCreate": wire.BookingCreateRequest{},
		"VisitCreate": wire.VisitCreateRequest{}, "VisitUpdate": wire.VisitUpdateRequest{},
		"VisitRequestCreate": wire.VisitRequestCreateRequest{}, "PostCreate": wire.PostCreateRequest{},
		"PostUpdate": wire.PostUpdateRequest{},
	}
	for _, op := range restclient.Operations() {
		name := answered(op)
		if name == "" {
			continue
		}
		typ := op.Answer()
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Name() == name { // not a whole answer (InvoiceItems holds an Invoice)
			client[name] = reflect.New(typ).Elem().Interface()
		}
		if _, ok := service[name]; !ok {
			t.Errorf("%s answers the schema %s: add restserver/wire's type of it to the service map", op, name)
		}
	}
	for side, pairs := range map[string]map[string]any{"restclient": client, "restserver/wire": service} {
		t.Run(side, func(t *testing.T) {
			for name, v := range pairs {
				ref := doc.Components.Schemas[name]
				if ref == nil {
					t.Errorf("schema %s missing", name)
					continue
				}
				typ := reflect.TypeOf(v)
				// Both directions at the top level.
				fields := jsonFields(typ)
				for f := range fields {
					if _, ok := ref.Value.Properties[f]; !ok {
						t.Errorf("%s: %s field %q not documented", name, side, f)
					}
				}
				// Documented -> decodable, recursively.
				compareSchema(t, name, ref.Value, typ)
			}
		})
	}
}

func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

var (
	timestampTypes = []reflect.Type{reflect.TypeOf(restclient.Timestamp{}), reflect.TypeOf(wire.Timestamp{})}
	rawType        = reflect.TypeOf(json.RawMessage{})
)

func compareSchema(t *testing.T, where string, s *openapi3.Schema, typ reflect.Type) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case slices.Contains(timestampTypes, typ):
		if s.Format != "date-time" || !s.Nullable {
			t.Errorf("%s: timestamp schema is %q nullable=%v", where, s.Format, s.Nullable)
		}
		return
	case typ == rawType:
		if !s.Type.Is("object") {
			t.Errorf("%s: free object documented as %v", where, s.Type)
		}
		return
	}
	switch typ.Kind() {
	case reflect.String:
		if !s.Type.Is("string") {
			t.Errorf("%s: string in restclient, %v documented", where, s.Type)
		}
	case reflect.Float64:
		if !s.Type.Is("number") {
			t.Errorf("%s: number in restclient, %v documented", where, s.Type)
		}
	case reflect.Bool:
		if !s.Type.Is("boolean") {
			t.Errorf("%s: boolean in restclient, %v documented", where, s.Type)
		}
	case reflect.Slice:
		if !s.Type.Is("array") {
			t.Errorf("%s: array in restclient, %v documented", where, s.Type)
			return
		}
		compareSchema(t, where+"[]", s.Items.Value, typ.Elem())
	case reflect.Struct:
		if !s.Type.Is("object") {
			t.Errorf("%s: object in restclient, %v documented", where, s.Type)
			return
		}
		fields := jsonFields(typ)
		for name, p := range s.Properties {
			ft, ok := fields[name]
			if !ok {
				t.Errorf("%s: documented property %q is not in restclient.%s", where, name, typ.Name())
				continue
			}
			compareSchema(t, where+"."+name, p.Value, ft)
		}
	default:
		t.Errorf("%s: unexpected Go kind %s", where, typ.Kind())
	}
}
