package hooks

// maxRecent bounds what each request log keeps (the most recent), so a
// long demo run does not grow without end.
const maxRecent = 4096

// ring keeps the last maxRecent values added to it, for the request logs
// tests and the bench read back (Seen, Timings). Not safe for concurrent
// use: its owner locks.
type ring[T any] struct {
	recent []T // grows to maxRecent, then is overwritten from next
	next   int // where the next value goes once recent is full
}

func (r *ring[T]) add(v T) {
	if len(r.recent) < maxRecent {
		r.recent = append(r.recent, v)
		return
	}
	r.recent[r.next] = v
	r.next = (r.next + 1) % maxRecent
}

func (r *ring[T]) reset() { r.recent, r.next = nil, 0 }

// all returns a copy of the values, oldest first.
func (r *ring[T]) all() []T {
	out := make([]T, 0, len(r.recent))
	out = append(out, r.recent[r.next:]...)
	return append(out, r.recent[:r.next]...)
}
