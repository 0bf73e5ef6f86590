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

// TestWorkersAreReused: a function handed over while a worker waits runs on
// that worker, not on a new goroutine.
func TestWorkersAreReused(t *testing.T) {
	ran := make(chan struct{}, 1)
	goReuse(func() { ran <- struct{}{} }) // a worker starts, runs it, then waits
	<-ran
	// The worker waits (up to workerIdle) in its select; hand it another
	// function once it is there: the send succeeds only with a receiver.
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case work <- func() { ran <- struct{}{} }:
			<-ran
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no worker waited for a function after running one")
		}
		time.Sleep(time.Millisecond)
	}
}
