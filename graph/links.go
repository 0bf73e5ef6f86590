package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/restclient"
)

// The fields each embedded summary holds, per the spec. When a query selects
// nothing else on a link, the summary answers it with no upstream call.
var (
	embeddedResource     = fieldSet("id", "title")                                       // transaction booking.resource
	embeddedItemResource = fieldSet("id", "title", "type")                               // invoice item booking.resource
	embeddedIDTitle      = fieldSet("id", "title")                                       // invoice, order product/option summaries
	embeddedIDName       = fieldSet("id", "name", "title")                               // a transaction's order option (title = name)
	embeddedOrderProduct = fieldSet("id", "title", "createDate", "description", "media") // an order's product
	embeddedEvent        = fieldSet("id", "title", "startDate", "endDate")               // a ticket's event
)

func fieldSet(names ...string) map[string]bool {
	m := map[string]bool{"__typename": true}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// embeddedSuffices reports whether every field the query selects on the
// current field's object is in the embedded summary (graph.md, "embedded
// first"). Always false when the request's Source is not EmbeddedFirst.
func embeddedSuffices(ctx context.Context, embedded map[string]bool) bool {
	if !loaders.For(ctx).EmbeddedFirst() {
		return false
	}
	// Plain fields, the common selection, are checked as they are; a
	// fragment or a directive goes through gqlgen's field collection
	// (@skip, @include, type conditions; lookahead: deferred fragments
	// included), which allocates.
	plain := true
	for _, sel := range graphql.GetFieldContext(ctx).Field.Selections {
		f, ok := sel.(*ast.Field)
		if !ok || len(f.Directives) > 0 {
			plain = false
			break
		}
		if !embedded[f.Name] {
			return false
		}
	}
	if plain {
		return true
	}
	for _, f := range lookahead(ctx, nil) {
		if !embedded[f.Name] {
			return false
		}
	}
	return true
}

// byRef answers a link: what the GET op (a row of restclient's operation
// table) answers for the id a ref holds, through the request's loader of
// op; nil for an absent ref.
func byRef[T any](ctx context.Context, op *restclient.Op[T], ref *string) (T, error) {
	if ref == nil || *ref == "" {
		var zero T
		return zero, nil
	}
	return loaders.Get(ctx, op, *ref)
}

// embeddedOr answers a link with emb, the summary its parent embeds, when
// it holds every field the query selects (fields), else as byRef does with
// the summary's id; nil when there is no summary (emb nil or id "").
func embeddedOr[T any](ctx context.Context, op *restclient.Op[*T], emb *T, id string, fields map[string]bool) (*T, error) {
	if emb == nil || id == "" {
		return nil, nil
	}
	if embeddedSuffices(ctx, fields) {
		return emb, nil
	}
	return loaders.Get(ctx, op, id)
}

// embeddedResourceOr answers a booking's resource (embeddedOr).
func embeddedResourceOr(ctx context.Context, emb *restclient.Resource, fields map[string]bool) (*restclient.Resource, error) {
	if emb == nil {
		return nil, nil
	}
	return embeddedOr(ctx, restclient.OpGetResource, emb, emb.ID, fields)
}

// embeddedEventOr answers a ticket's event (embeddedOr).
func embeddedEventOr(ctx context.Context, emb *restclient.Event) (*restclient.Event, error) {
	if emb == nil {
		return nil, nil
	}
	return embeddedOr(ctx, restclient.OpGetEvent, emb, emb.ID, embeddedEvent)
}

// invoiceByRef answers a link to an invoice: byRef's invoice with its items
// (one call gives both).
func invoiceByRef(ctx context.Context, ref *string) (*restclient.Invoice, error) {
	inv, err := byRef(ctx, restclient.OpListInvoiceItems, ref)
	if inv == nil || err != nil {
		return nil, err
	}
	return inv.Invoice, nil
}

// completed answers a field of v read through v.Complete: a restclient
// value loaded by id has its objects and arrays decoded on first read
// (restclient's lazy.go).
func completed[V interface{ Complete() (V, error) }, T any](v V, part func(V) T) (T, error) {
	whole, err := v.Complete()
	if err != nil {
		var zero T
		return zero, err
	}
	return part(whole), nil
}

// invoiceItem finds item itemID of invoice invoiceID with the invoice's call.
// It returns nil, nil when the invoice has no such item.
func invoiceItem(ctx context.Context, invoiceID, itemID string) (*restclient.InvoiceItem, error) {
	inv, err := loaders.Get(ctx, restclient.OpListInvoiceItems, invoiceID)
	if err == nil {
		inv, err = inv.Complete()
	}
	if err != nil {
		return nil, err
	}
	for _, it := range inv.Items {
		if it.ID == itemID {
			return it, nil
		}
	}
	return nil, nil
}

// embeddedProductOr answers a product link: the embedded summary when it
// suffices, else the product list of locationRef (one call per location),
// else GET /shop/products/v1/{productId}.
func embeddedProductOr(ctx context.Context, emb *restclient.Product, fields map[string]bool, locationRef *string) (*restclient.Product, error) {
	if emb == nil || emb.ID == "" {
		return nil, nil
	}
	if embeddedSuffices(ctx, fields) {
		return emb, nil
	}
	return loaders.ProductInLocation(ctx, deref(locationRef), emb.ID)
}

// embeddedOptionOr answers an option link: the embedded {id, title} when it
// suffices, else the option of that id among the product's options (loaded
// as embeddedProductOr does). Nil when the product has no such option.
func embeddedOptionOr(ctx context.Context, emb *restclient.ProductOption, product *restclient.Product, locationRef *string) (*restclient.ProductOption, error) {
	if emb == nil || emb.ID == "" {
		return nil, nil
	}
	if embeddedSuffices(ctx, embeddedIDTitle) {
		return emb, nil
	}
	return productOption(ctx, emb.ID, product, locationRef)
}

// productOption loads option id among the options of the embedded product
// (as embeddedProductOr does); nil when the product has no such option.
func productOption(ctx context.Context, id string, product *restclient.Product, locationRef *string) (*restclient.ProductOption, error) {
	if product == nil || product.ID == "" {
		return nil, nil
	}
	p, err := loaders.ProductInLocation(ctx, deref(locationRef), product.ID)
	if err != nil {
		return nil, err
	}
	for i := range p.Options {
		if p.Options[i].ID == id {
			return &p.Options[i], nil
		}
	}
	return nil, nil
}

// transactionOrderOption answers a transaction order's option: the embedded
// {id, name} when the query selects nothing else, else the product's option
// of that id, keeping the summary's name.
func transactionOrderOption(ctx context.Context, o *model.TransactionOrder) (*model.TransactionOrderOption, error) {
	emb := model.TransactionOrderOptionOf(o.Option)
	if emb == nil || embeddedSuffices(ctx, embeddedIDName) {
		return emb, nil
	}
	opt, err := productOption(ctx, emb.ID, o.Product, o.LocationRef)
	if opt == nil || err != nil {
		return nil, err
	}
	full := &model.TransactionOrderOption{ProductOption: *opt, Name: emb.Name}
	if full.Name == nil {
		full.Name = opt.Title
	}
	return full, nil
}

// commentsOf returns the comments of the post a comment belongs to.
func commentsOf(ctx context.Context, c *restclient.Comment) ([]*restclient.Comment, error) {
	return byRef(ctx, restclient.OpListComments, c.PostRef)
}

// parentComment finds c's parent in its post's comment list (already loaded
// when c came from it).
func parentComment(ctx context.Context, c *restclient.Comment) (*restclient.Comment, error) {
	if c.ParentCommentRef == nil || *c.ParentCommentRef == "" {
		return nil, nil
	}
	all, err := commentsOf(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, o := range all {
		if o.ID == *c.ParentCommentRef {
			return o, nil
		}
	}
	return nil, nil
}

// replies returns the comments whose parent is c, in upstream order.
func replies(ctx context.Context, c *restclient.Comment) ([]*restclient.Comment, error) {
	all, err := commentsOf(ctx, c)
	if err != nil {
		return nil, err
	}
	out := []*restclient.Comment{}
	for _, o := range all {
		if o.ParentCommentRef != nil && *o.ParentCommentRef == c.ID {
			out = append(out, o)
		}
	}
	return out, nil
}

func location(ref *string) (*model.Location, error) { return model.LocationFromRef(ref), nil }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ptrs returns pointers to the elements of s (resolvers return []*T; the
// wire types embed []T).
func ptrs[T any](s []T) []*T {
	if s == nil {
		return nil
	}
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}
