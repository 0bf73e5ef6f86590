package livequery

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"sync"

	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/restclient"
)

// read is one GET a run of the live query read.
type read struct {
	route, id string
	q         url.Values
	body      []byte
	key       string // the source watching it ("": none)
}

// memo is a live query's restclient.ReadLog: the bodies its last run read
// answer its next run, except those the changes since made stale (dropped)
// and those a change rewrote with the poll's fresh objects (patched). A
// re-run therefore calls the upstream only for what no body answers.
type memo struct {
	mu   sync.Mutex
	prev map[string]*read // uri -> what the last run read: the answers
	cur  map[string]*read // uri -> what this run reads
}

func newMemo() *memo { return &memo{cur: map[string]*read{}} }

func (m *memo) Answer(_, uri string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.prev[uri]; r != nil {
		return r.body, true
	}
	return nil, false
}

func (m *memo) Read(route, id string, q url.Values, uri string, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur[uri] == nil {
		m.cur[uri] = &read{route: route, id: id, q: q, body: body}
	}
}

// begin starts a run; end ends it, its reads the next run's answers
// (keep false: none), and returns them.
func (m *memo) begin() {
	m.mu.Lock()
	m.cur = map[string]*read{}
	m.mu.Unlock()
}

func (m *memo) end(keep bool) map[string]*read {
	m.mu.Lock()
	defer m.mu.Unlock()
	reads := m.cur
	m.prev, m.cur = nil, map[string]*read{}
	if keep {
		m.prev = reads
	}
	return reads
}

// endMerge ends a run that failed: what it read is added to the answers.
func (m *memo) endMerge() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.prev == nil {
		m.prev = map[string]*read{}
	}
	for uri, r := range m.cur {
		m.prev[uri] = r
	}
	m.cur = map[string]*read{}
}

// drop forgets the answers: the next run reads afresh.
func (m *memo) drop() {
	m.mu.Lock()
	m.prev = nil
	m.mu.Unlock()
}

// bytes is the size of the bodies kept.
func (m *memo) bytes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for uri, r := range m.prev {
		n += len(uri) + len(r.body)
	}
	return n
}

// newestFirst are the list routes whose pages list the newest item first:
// a created item goes on top of such a page.
// defaultPage is the upstream's page size without a limit.
const defaultPage = 25

var newestFirst = map[string]bool{
	restclient.OpListTransactions.Route: true,
	restclient.OpListOrders.Route:       true,
	restclient.OpListCreditNotes.Route:  true,
}

// apply brings the kept bodies up to date with the changes a poll of src
// saw: the bodies src watches are rewritten with the changed objects
// (dropped when they cannot be), and those its changes make stale
// otherwise (src.Stale) are dropped.
func (m *memo) apply(src live.Source, events []live.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var stale []restclient.Entry
	if src.Stale != nil {
		stale = src.Stale(events)
	}
	for uri, r := range m.prev {
		if r.key == src.Key {
			if b, ok := patchBody(r, events); ok {
				r.body = b
				continue
			}
			delete(m.prev, uri)
			continue
		}
		for _, e := range stale {
			if r.route == e.Route && (r.id == e.Value || r.q.Get(e.Param) == e.Value) {
				delete(m.prev, uri)
				break
			}
		}
	}
}

// patchBody returns r's body with the changed objects of events in place:
// an object's envelope ({"resource": {...}}) gets the new object; a list
// page's items ({"orders": [...], "nextPageToken": ...}) get each updated
// item in place, and a created one on top of a first page of a list listed
// newest first without a next page (trimmed to the page's limit). ok is
// false when the body cannot be rewritten so (the run fetches it again).
func patchBody(r *read, events []live.Event) ([]byte, bool) {
	var env map[string]json.RawMessage
	if json.Unmarshal(r.body, &env) != nil {
		return nil, false
	}
	var field string
	var isList bool
	for k, v := range env {
		v = bytes.TrimSpace(v)
		if len(v) > 0 && (v[0] == '[' || v[0] == '{') {
			if field != "" {
				return nil, false // more than one: not a known shape
			}
			field, isList = k, v[0] == '['
		}
	}
	if field == "" {
		return nil, false
	}
	if !isList {
		if r.route == restclient.OpListInvoiceItems.Route {
			return nil, false
		}
		last := events[len(events)-1]
		if last.Kind == live.Failed || last.Value == nil {
			return nil, false
		}
		b, err := json.Marshal(last.Value)
		if err != nil {
			return nil, false
		}
		env[field] = b
		out, err := json.Marshal(env)
		return out, err == nil
	}
	items, ok := patchItems(r, env, field, events)
	if !ok {
		return nil, false
	}
	env[field], _ = json.Marshal(items)
	out, err := json.Marshal(env)
	return out, err == nil
}

func patchItems(r *read, env map[string]json.RawMessage, field string, events []live.Event) ([]json.RawMessage, bool) {
	var items []json.RawMessage
	if json.Unmarshal(env[field], &items) != nil {
		return nil, false
	}
	at := map[string]int{}
	for i, it := range items {
		var id struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(it, &id) != nil || id.ID == "" {
			return nil, false
		}
		at[id.ID] = i
	}
	var next string
	_ = json.Unmarshal(env["nextPageToken"], &next)
	for _, e := range events {
		if e.Kind == live.Failed {
			continue
		}
		b, err := json.Marshal(e.Value)
		if err != nil || e.Value == nil {
			return nil, false
		}
		if i, ok := at[e.ID]; ok {
			items[i] = b
			continue
		}
		// New on this page: only on top of a whole newest-first page.
		if !newestFirst[r.route] || next != "" || e.Kind != live.Created {
			return nil, false
		}
		limit, err := strconv.Atoi(r.q.Get("limit"))
		if err != nil {
			limit = defaultPage
		}
		if len(items) >= limit {
			return nil, false // the page was full: the upstream's next page token changes
		}
		items = append([]json.RawMessage{b}, items...)
		for id, i := range at {
			at[id] = i + 1
		}
		at[e.ID] = 0
	}
	return items, true
}
