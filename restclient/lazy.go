package restclient

import "sync"

// Lazy decoding
//
// Some calls have a lazily decoding variant (ListInvoiceItemsLazily,
// GetResourceLazily) for callers that seldom read more than a value's
// scalars: a generated lazy_<Type> decoder (jsongen -lazy) decodes the
// strings, numbers, booleans and dates, and validates every object and
// array without decoding it, so malformed JSON is still the call's
// *DecodeError. The value then keeps a lazyDoc, and its Complete method
// returns the value with every field decoded: the whole body decoded once,
// for every holder, by the first Complete. A value of the wrong type in a
// part left undecoded is that Complete's *DecodeError, naming the call.
// Nothing is modified after the call returns, so the values the facade's
// loaders, shared GETs and response cache hand to concurrent readers stay
// read only.

// lazyDoc is what a lazily decoded value keeps for Complete.
type lazyDoc[T any] struct {
	body          []byte // read only: decoded strings alias it anyway
	method, route string
	whole         func([]byte) (*T, error) // the eager decoding of body

	once sync.Once
	v    *T
	err  error
}

// decoded returns the body decoded whole, decoding it on the first call.
// Its error names the call as the client's do does (the decoders' messages
// hold no text of the body but a number's digits: nothing to redact).
func (z *lazyDoc[T]) decoded() (*T, error) {
	z.once.Do(func() {
		z.v, z.err = z.whole(z.body)
		if z.err != nil {
			z.v, z.err = nil, &DecodeError{Method: z.method, Route: z.route, Err: z.err}
		}
	})
	return z.v, copyError(z.err)
}
