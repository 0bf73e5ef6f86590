package inline

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// Goroutines kept for reuse
//
// An element of a list that may wait for an upstream call runs on a goroutine
// of its own, so that the elements' calls are made together. A new goroutine
// starts with a small stack and grows it, by copying, to the depth of gqlgen's
// execution of a nested object (runtime.newstack was 14 % of the
// 100-transaction feed's CPU). goReuse runs a function on a goroutine that
// has run one before and waits for the next for up to workerIdle, keeping its
// grown stack, instead of on a new one.

// workerIdle is how long a worker waits for its next function before it ends.
const workerIdle = time.Second

// work hands a function to a worker waiting for one (unbuffered: a send
// succeeds only when a worker is there to take it).
var work = make(chan func())

// goReuse runs f on a waiting worker, or on a new one.
func goReuse(f func()) {
	select {
	case work <- f:
	default:
		go worker(f)
	}
}

// worker runs f, then the functions handed to it, until none comes for
// workerIdle.
func worker(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		f = nil
		idle.Reset(workerIdle)
		select {
		case f = <-work:
		case <-idle.C:
			return
		}
	}
}

// marshalConcurrently is graphql.MarshalSliceConcurrently without a worker
// limit: the same field contexts (one allocation for all of them), panic
// recovery and result (nil after a panic), with the first element marshalled
// on this goroutine and the others on reused ones (goReuse).
func marshalConcurrently(ctx context.Context, length int, omitPanicHandler bool, marshal func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	ret := make(graphql.Array, length)
	elems := make([]element, length)
	var failed atomic.Bool
	var wg sync.WaitGroup
	run := func(i int) {
		e := &elems[i]
		e.index = i
		e.fc.Index = &e.index
		childCtx := graphql.WithFieldContext(ctx, &e.fc)
		if !omitPanicHandler {
			defer func() {
				if r := recover(); r != nil {
					graphql.AddError(childCtx, graphql.Recover(childCtx, r))
					failed.Store(true)
				}
			}()
		}
		ret[i] = marshal(childCtx, i)
	}
	wg.Add(length - 1)
	for i := 1; i < length; i++ {
		goReuse(func() {
			defer wg.Done()
			run(i)
		})
	}
	run(0)
	wg.Wait()
	if failed.Load() {
		return nil
	}
	return ret
}
