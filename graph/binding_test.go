package graph

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/restclient"
)

// These tests run queries through the generated executor with stand-in
// resolvers, to prove the bindings of gqlgen.yml at run time: enums to the
// restclient constants, DateTime and JSON scalars, fields through the order
// wrappers, the commentCount rename and the input models.

type fakeRoot struct{ generated.ResolverRoot } // unset resolvers panic if reached

func (fakeRoot) Query() generated.QueryResolver       { return fakeQuery{} }
func (fakeRoot) Mutation() generated.MutationResolver { return fakeMutation{} }
func (fakeRoot) Transaction() generated.TransactionResolver {
	return fakeTransaction{}
}
func (fakeRoot) TransactionOrder() generated.TransactionOrderResolver {
	return fakeTransactionOrder{}
}

type fakeQuery struct{ generated.QueryResolver }

func (fakeQuery) Transactions(_ context.Context, locationID string, status *restclient.TransactionStatus, typ *restclient.TransactionType, createDate *model.DateRangeInput, first *int, after *string) (*model.TransactionConnection, error) {
	if locationID != "loc-1" || status == nil || *status != restclient.TransactionStatusSucceeded || typ != nil ||
		createDate == nil || createDate.Lte != nil || !createDate.Gte.Equal(time.Date(2021, 5, 1, 0, 0, 0, 0, time.UTC)) ||
		first == nil || *first != 25 || after != nil {
		return nil, &json.UnsupportedValueError{Str: "unexpected arguments"}
	}
	tx := &restclient.Transaction{
		ID:          "tx-1",
		LocationRef: new("loc-1"),
		Status:      new(restclient.TransactionStatusSucceeded),
		Type:        new(restclient.TransactionTypeCreditPackage),
		CreateDate:  restclient.NewTimestamp(time.Date(2021, 5, 21, 12, 0, 0, 0, time.FixedZone("CEST", 7200))),
		Company:     &restclient.Company{ID: "c-1", Metadata: json.RawMessage(`{"k":"v"}`), DeleteDate: &restclient.Timestamp{}},
		Order: &restclient.TransactionOrder{
			ID:     "o-1",
			Option: &restclient.OptionNameSummary{ID: "opt-1", Name: new("Large")},
			Price:  &restclient.PriceSplit{NetAmount: new(8.5)},
		},
	}
	return &model.TransactionConnection{
		Edges:    []*model.TransactionEdge{{Cursor: "c1", Node: tx}},
		Nodes:    []*restclient.Transaction{tx},
		PageInfo: &model.PageInfo{EndCursor: new("c1")},
	}, nil
}

type fakeTransaction struct{ generated.TransactionResolver }

func (fakeTransaction) Order(_ context.Context, obj *restclient.Transaction) (*model.TransactionOrder, error) {
	return model.TransactionOrderOf(obj), nil
}

type fakeTransactionOrder struct {
	generated.TransactionOrderResolver
}

func (fakeTransactionOrder) Option(_ context.Context, obj *model.TransactionOrder) (*model.TransactionOrderOption, error) {
	return model.TransactionOrderOptionOf(obj.Option), nil
}

type fakeMutation struct{ generated.MutationResolver }

func (fakeMutation) CreatePost(_ context.Context, in model.CreatePostInput) (*model.CreatePostPayload, error) {
	if in.LocationRef != "loc-1" || in.Media == nil || len(in.Media) != 0 || in.Og == nil || in.Og.URL != "https://x" || in.Text != nil {
		return nil, &json.UnsupportedValueError{Str: "unexpected input"}
	}
	return &model.CreatePostPayload{Post: &restclient.Post{ID: "p-1", Comments: new(3.0), Og: json.RawMessage(`{"url":"https://x"}`)}}, nil
}

func (fakeMutation) UpdatePost(_ context.Context, id string, in model.UpdatePostInput) (*model.UpdatePostPayload, error) {
	if id != "p-1" || in.Media != nil || in.Text == nil || *in.Text != "new" {
		return nil, &json.UnsupportedValueError{Str: "unexpected input"}
	}
	return &model.UpdatePostPayload{Post: &restclient.Post{ID: id}}, nil
}

func newTestClient() *client.Client {
	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: fakeRoot{}}))
	srv.AddTransport(transport.POST{})
	return client.New(srv)
}

func TestBindingsAtRunTime(t *testing.T) {
	c := newTestClient()
	var resp struct {
		Transactions struct {
			Nodes []struct {
				ID, Status, Type, CreateDate string
				Company                      struct {
					Metadata   map[string]string
					DeleteDate *string
				}
				Order struct {
					ID     string
					Price  struct{ NetAmount float64 }
					Option struct{ ID, Name, Title string }
				}
			}
			PageInfo struct {
				HasNextPage bool
				EndCursor   string
			}
		}
	}
	err := c.Post(`{ transactions(locationId: "loc-1", status: SUCCEEDED, createDate: {gte: "2021-05-01T02:00:00+02:00"}) {
		nodes { id status type createDate company { metadata deleteDate }
		        order { id price { netAmount } option { id name title } } }
		pageInfo { hasNextPage endCursor } } }`, &resp)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Transactions.Nodes) != 1 {
		t.Fatalf("nodes = %+v", resp.Transactions.Nodes)
	}
	n := resp.Transactions.Nodes[0]
	if n.ID != "tx-1" || n.Status != "SUCCEEDED" || n.Type != "CREDIT_PACKAGE" || n.CreateDate != "2021-05-21T10:00:00Z" {
		t.Errorf("transaction = %+v", n)
	}
	if n.Company.Metadata["k"] != "v" || n.Company.DeleteDate != nil {
		t.Errorf("company = %+v (zero DateTime must be null)", n.Company)
	}
	if n.Order.ID != "o-1" || n.Order.Price.NetAmount != 8.5 || n.Order.Option.ID != "opt-1" || n.Order.Option.Name != "Large" || n.Order.Option.Title != "Large" {
		t.Errorf("order = %+v", n.Order)
	}
	if resp.Transactions.PageInfo.HasNextPage || resp.Transactions.PageInfo.EndCursor != "c1" {
		t.Errorf("pageInfo = %+v", resp.Transactions.PageInfo)
	}
}

func TestInputBindingsAtRunTime(t *testing.T) {
	c := newTestClient()
	var created struct {
		CreatePost struct {
			Post struct {
				ID           string
				CommentCount float64
				Og           map[string]string
			}
		}
	}
	if err := c.Post(`mutation { createPost(input: {locationRef: "loc-1", media: [], og: {url: "https://x"}}) { post { id commentCount og } } }`, &created); err != nil {
		t.Fatal(err)
	}
	if p := created.CreatePost.Post; p.ID != "p-1" || p.CommentCount != 3 || p.Og["url"] != "https://x" {
		t.Errorf("post = %+v", p)
	}
	var updated struct {
		UpdatePost struct{ Post struct{ ID string } }
	}
	if err := c.Post(`mutation { updatePost(id: "p-1", input: {text: "new"}) { post { id } } }`, &updated); err != nil {
		t.Fatal(err)
	}
	if updated.UpdatePost.Post.ID != "p-1" {
		t.Errorf("updated = %+v", updated)
	}
	// An unknown enum value and a malformed DateTime are rejected before any resolver runs.
	for _, q := range []string{
		`{ transactions(locationId: "loc-1", status: succeeded) { nodes { id } } }`,
		`{ transactions(locationId: "loc-1", createDate: {gte: "May 1st"}) { nodes { id } } }`,
	} {
		var out map[string]any
		if err := c.Post(q, &out); err == nil {
			t.Errorf("%s: accepted", q)
		}
	}
}
