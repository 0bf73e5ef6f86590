package inline

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// TestMarshalSliceConcurrently: the elements of a list that may block run
// together (each waits until all have started: marshalled one after the other,
// they would never finish), each with its index in the field context; a
// panicking element makes the list null with an error, as gqlgen's does.
func TestMarshalSliceConcurrently(t *testing.T) {
	_, sel := selection(t, `{ location { transactions { booking { resource { id } } } } }`, "location", "transactions")
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter,
		func(_ context.Context, r any) error { return fmt.Errorf("panic: %v", r) })
	const n = 50
	for round := range 2 { // the second round runs on the first's workers
		var started sync.WaitGroup
		started.Add(n)
		all := make(chan struct{})
		go func() { started.Wait(); close(all) }()
		ret := tbl.MarshalSlice(ctx, sel, n, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
			started.Done()
			select {
			case <-all:
			case <-time.After(time.Minute): // a bound for a broken build only
				t.Errorf("round %d: element %d waited a minute for the others to start", round, i)
			}
			return graphql.MarshalInt(*graphql.GetFieldContext(ctx).Index * 10)
		})
		var b, want bytes.Buffer
		ret.MarshalGQL(&b)
		want.WriteString("[")
		for i := range n {
			if i > 0 {
				want.WriteString(",")
			}
			fmt.Fprint(&want, i*10)
		}
		want.WriteString("]")
		if b.String() != want.String() {
			t.Fatalf("round %d: got %s, want %s", round, b.String(), want.String())
		}
	}
	ret := tbl.MarshalSlice(ctx, sel, 3, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		if i == 2 {
			panic("boom")
		}
		return graphql.MarshalInt(i)
	})
	if ret != nil || len(graphql.GetErrors(ctx)) != 1 {
		t.Fatalf("got %v, errors %v", ret, graphql.GetErrors(ctx))
	}
}
