package live

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/restclient"
)

// Write-through
//
// A write made through the facade makes stale what its row of restclient's
// operation table says (restclient.StaleAfter). Hub.Poke makes the pollers
// of the writer's identity whose source reads one of those entries poll at
// once, instead of at their next interval: the writer's subscriptions see
// its own change within a poll's time. The poll is an ordinary one (the
// budget's lowest priority, its changes compared with the previous poll);
// pokes that come while a poll is waiting or in progress make one more
// poll, never one each. Other identities' pollers are never poked: they see
// the change at their next poll. With Redis, the poller of a source may
// run on another replica (the lease holder): Poke also publishes the
// entries, sealed, on the identity's poke channel, which every poller of
// that identity hears (bus.go), and the holder among them polls at once.

// Poke makes the pollers of identity whose source reads one of stale poll
// now (on this replica, and, with Redis, on the replica holding the
// source's lease); it returns how many pollers of this replica it poked.
func (h *Hub) Poke(identity string, stale []restclient.Entry) int {
	if identity == "" || len(stale) == 0 {
		return 0
	}
	h.mu.Lock()
	var poked []*poller
	for k, p := range h.pollers {
		if k.identity == identity && reads(p.src, stale) {
			poked = append(poked, p)
		}
	}
	h.mu.Unlock()
	for _, p := range poked {
		p.pokeNow()
	}
	if h.c.Shared != nil {
		h.c.Shared.publishPoke(identity, stale)
	}
	return len(poked)
}

// pokeNow asks p for a poll now.
func (p *poller) pokeNow() {
	select {
	case p.poke <- struct{}{}:
	default:
	}
}

// reads reports whether src reads one of the entries stale: one of its
// Reads of the same route and parameter with the same value (ids compare
// without case: they are uuids), or any value for restclient.AnyValue.
func reads(src Source, stale []restclient.Entry) bool {
	for _, e := range stale {
		for _, r := range src.Reads {
			if r.Route == e.Route && r.Param == e.Param && (e.Value == restclient.AnyValue || strings.EqualFold(r.Value, e.Value)) {
				return true
			}
		}
	}
	return false
}

// pokeChannelPrefix begins an identity's poke channel: under the sources'
// channels' prefix (wnf:live:ch:), so that the one ACL channel pattern of
// docs/redis.md admits both; a source's channel is the prefix and a hex name.
const pokeChannelPrefix = sharedPrefix + "ch:poke:"

// pokeMsg is what Poke publishes on an identity's poke channel.
type pokeMsg struct {
	Replica string             `json:"r"`
	Stale   []restclient.Entry `json:"e"`
}

// pokeName is the name in Redis of identity's poke channel (its sources'
// names are of routes, which begin with "/": never "poke").
func (s *Shared) pokeName(identity string) string {
	return s.name(pollerKey{identity, "poke"})
}

// publishPoke tells the other replicas' pollers of identity what a write
// made stale (sealed, the channel's name as additional data). Nothing while
// Redis is unavailable: every replica then polls alone, and this one's
// pollers were poked.
func (s *Shared) publishPoke(identity string, stale []restclient.Entry) {
	name := s.pokeName(identity)
	channel := pokeChannelPrefix + name
	if !s.rc.HealthyKey(channel) {
		return
	}
	b, err := json.Marshal(pokeMsg{Replica: s.replica, Stale: stale})
	if err != nil {
		return
	}
	sealed := s.box.Seal(nil, b, []byte(name))
	ctx, cancel := context.WithTimeout(context.Background(), s.rc.OpTimeout())
	defer cancel()
	_ = s.rc.DoKey(ctx, channel, func(ctx context.Context, r redis.UniversalClient) error {
		return r.Publish(ctx, channel, sealed).Err()
	})
}

// pokedBy reports whether the poke payload, published by another replica,
// names an entry p's source reads.
func (s *Shared) pokedBy(p *poller, payload string, ad []byte) bool {
	b, err := s.box.Open([]byte(payload), ad)
	if err != nil {
		return false
	}
	var m pokeMsg
	if json.Unmarshal(b, &m) != nil || m.Replica == s.replica {
		return false
	}
	return reads(p.src, m.Stale)
}

// poked makes the poller poll at once if this replica polls for it (it
// holds the lease, or polls alone); the holder, on another replica, heard
// the same poke on the identity's channel.
func (r *sharedRun) poked() {
	if r.holding || !r.in.isListening() {
		r.nextPoll = time.Now()
	}
}
