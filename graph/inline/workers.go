package inline

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/internal/workers"
)

// The elements of a list that may wait for an upstream call run on
// goroutines of their own, so that the elements' calls are made together;
// they come from a pool (internal/workers) whose goroutines wait a second for
// the next element, keeping the stack grown to the depth of gqlgen's
// execution of a nested object (runtime.newstack was 14 % of the
// 100-transaction feed's CPU with a new goroutine each).
var elements = workers.New(time.Second)

// marshalConcurrently is graphql.MarshalSliceConcurrently without a worker
// limit: the same field contexts (one allocation for all of them), panic
// recovery and result (nil after a panic), with the first element marshalled
// on this goroutine and the others on reused ones (elements).
func marshalConcurrently(ctx context.Context, length int, omitPanicHandler bool, marshal func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	ret := make(graphql.Array, length)
	elems := make([]element, length)
	var failed atomic.Bool
	var wg sync.WaitGroup
	wg.Add(length - 1)
	for i := 1; i < length; i++ {
		elements.Go(func() {
			defer wg.Done()
			ret[i] = marshalElement(ctx, &elems[i], i, omitPanicHandler, &failed, marshal)
		})
	}
	ret[0] = marshalElement(ctx, &elems[0], 0, omitPanicHandler, &failed, marshal)
	wg.Wait()
	if failed.Load() {
		return nil
	}
	return ret
}
