package main

// The write-through measurement (go run ./bench -write-through N): a
// client's updateVisit and createCreditNote through the facade until that
// client's visitEvents and creditNoteEvents deliver the change, with polls
// every 5 s, over two replicas on one Redis (the subscriptions on the first,
// the writes alternating between the two: half the pokes cross Redis to the
// poller's lease holder), the local REST service enforcing 10 requests/s
// per client.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// writeThroughInterval is the polling interval of the measurement.
const writeThroughInterval = 5 * time.Second

// wtBench is the measurement's state: the replicas' bases, the client, and
// the events its subscriptions received, by what names them (a visit's
// comment, a credit note's id), with when.
type wtBench struct {
	bases          []string
	creds          restclient.Credentials
	visit, invoice string
	item           string
	mu             sync.Mutex
	seen           map[string]time.Time
	arrived        chan struct{}
}

// runWriteThrough measures rounds writes of each kind and prints a table.
func runWriteThrough(ctx context.Context, rounds int) error {
	redisURL, stopRedis, err := startRedis()
	if err != nil {
		return err
	}
	defer stopRedis()
	up, err := stack.StartUpstream(ctx, stack.UpstreamConfig{DemoScale: 1, RateLimit: 10})
	if err != nil {
		return err
	}
	defer up.Close()
	m := up.Manifest
	sts, bases, err := startReplicasAt(ctx, up.URL, redisURL, writeThroughInterval)
	for _, st := range sts {
		defer st.Close()
	}
	if err != nil {
		return err
	}
	b := &wtBench{bases: bases, creds: restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID},
		visit: m.IDs["visit"][0], invoice: m.IDs["invoice"][0], seen: map[string]time.Time{}, arrived: make(chan struct{}, 1)}
	var inv struct {
		Invoice struct{ Items []struct{ ID string } }
	}
	if err := b.post(ctx, bases[0], `query($id: ID!) { invoice(id: $id) { items { id } } }`, map[string]any{"id": b.invoice}, &inv); err != nil || len(inv.Invoice.Items) == 0 {
		return fmt.Errorf("invoice %s: %v", b.invoice, err)
	}
	b.item = inv.Invoice.Items[0].ID
	conn, err := b.subscribe(ctx, bases[0])
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	waitFor(func() bool { return sts[0].Live.Stats().Ready >= 2 })
	var visits, notes []time.Duration
	for i := range rounds {
		base := bases[i%2]
		d, err := b.updateVisit(ctx, base, i)
		if err != nil {
			return err
		}
		visits = append(visits, d)
		if d, err = b.createCreditNote(ctx, base); err != nil {
			return err
		}
		notes = append(notes, d)
	}
	printWriteThrough(os.Stdout, rounds, visits, notes)
	return nil
}

// updateVisit changes the visit's comment through base and returns how long
// until the subscription delivered it.
func (b *wtBench) updateVisit(ctx context.Context, base string, i int) (time.Duration, error) {
	comment := fmt.Sprintf("write-through %d %d", i, time.Now().UnixNano())
	t := time.Now()
	err := b.post(ctx, base, `mutation($id: ID!, $in: UpdateVisitInput!) { updateVisit(id: $id, input: $in) { visit { id } } }`,
		map[string]any{"id": b.visit, "in": map[string]any{"date": "2030-05-01T10:00:00Z", "comment": comment}}, nil)
	if err != nil {
		return 0, err
	}
	return b.await(ctx, comment, t)
}

// createCreditNote credits the invoice's first item through base and
// returns how long until the subscription delivered the new note.
func (b *wtBench) createCreditNote(ctx context.Context, base string) (time.Duration, error) {
	var made struct {
		CreateCreditNote struct{ CreditNote struct{ ID string } }
	}
	t := time.Now()
	err := b.post(ctx, base, `mutation($in: CreateCreditNoteInput!) { createCreditNote(input: $in) { creditNote { id } } }`,
		map[string]any{"in": map[string]any{"invoiceRef": b.invoice, "reason": "other", "lines": []any{map[string]any{"invoiceItemRef": b.item, "amount": 0.01}}}}, &made)
	if err != nil {
		return 0, err
	}
	return b.await(ctx, made.CreateCreditNote.CreditNote.ID, t)
}

// await waits, at most three intervals, for the event named key and
// returns its arrival since t.
func (b *wtBench) await(ctx context.Context, key string, t time.Time) (time.Duration, error) {
	deadline := time.After(3 * writeThroughInterval)
	for {
		b.mu.Lock()
		at, ok := b.seen[key]
		b.mu.Unlock()
		if ok {
			return at.Sub(t), nil
		}
		select {
		case <-b.arrived:
		case <-deadline:
			return 0, fmt.Errorf("no event of %q within %v", key, 3*writeThroughInterval)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// post sends a GraphQL request to base as the client and decodes its data
// into out (nil: ignored); an answer with errors is an error.
func (b *wtBench) post(ctx context.Context, base, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", b.creds.Authorization)
	req.Header.Set("service-network-id", b.creds.NetworkID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Errors) > 0 || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%d %s", resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(r.Data, out)
}

// subscribe opens the client's graphql-transport-ws connection to base with
// its visitEvents and creditNoteEvents, recording each event's arrival.
func (b *wtBench) subscribe(ctx context.Context, base string) (*websocket.Conn, error) {
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	send := func(v any) error {
		p, _ := json.Marshal(v)
		return c.Write(ctx, websocket.MessageText, p)
	}
	msgs := []any{
		map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": b.creds.Authorization, "service-network-id": b.creds.NetworkID}},
		map[string]any{"id": "visit", "type": "subscribe", "payload": map[string]any{"query": `subscription($id: ID!) { visitEvents(id: $id) { kind node { comment } } }`, "variables": map[string]string{"id": b.visit}}},
		map[string]any{"id": "notes", "type": "subscribe", "payload": map[string]any{"query": `subscription($inv: ID) { creditNoteEvents(invoiceId: $inv) { kind node { id } } }`, "variables": map[string]string{"inv": b.invoice}}},
	}
	for i, m := range msgs {
		if err := send(m); err != nil {
			return nil, err
		}
		if i == 0 {
			if _, _, err := c.Read(ctx); err != nil { // connection_ack
				return nil, err
			}
		}
	}
	go b.receive(c)
	return c, nil
}

// receive records the events of c until it closes.
func (b *wtBench) receive(c *websocket.Conn) {
	for {
		_, p, err := c.Read(context.Background())
		if err != nil {
			return
		}
		at := time.Now()
		var m struct {
			Type    string
			Payload struct {
				Data struct {
					VisitEvents      *struct{ Node *struct{ Comment string } }
					CreditNoteEvents *struct{ Node *struct{ ID string } }
				}
			}
		}
		if json.Unmarshal(p, &m) != nil || m.Type != "next" {
			continue
		}
		key := ""
		switch d := m.Payload.Data; {
		case d.VisitEvents != nil && d.VisitEvents.Node != nil:
			key = d.VisitEvents.Node.Comment
		case d.CreditNoteEvents != nil && d.CreditNoteEvents.Node != nil:
			key = d.CreditNoteEvents.Node.ID
		}
		b.mu.Lock()
		if _, dup := b.seen[key]; !dup && key != "" {
			b.seen[key] = at
		}
		b.mu.Unlock()
		select {
		case b.arrived <- struct{}{}:
		default:
		}
	}
}

// printWriteThrough writes the measurement's table.
func printWriteThrough(w io.Writer, rounds int, visits, notes []time.Duration) {
	fmt.Fprintf(w, "## Write-through (go run ./bench -write-through %d, %s)\n\n", rounds, time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(w, "A client's write through the facade until that client's subscription delivers it, polls every %v, two replicas on one Redis (subscriptions on the first, writes alternating: half the pokes cross Redis), the local REST service enforcing 10 requests/s per client; %d writes of each kind; %d CPUs, %s.\n\n", writeThroughInterval, rounds, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "| write, until the writer's event | p50 | p95 | max | without write-through (up to) |\n|---|---|---|---|---|\n")
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{{"`updateVisit` → `visitEvents`", visits}, {"`createCreditNote` → `creditNoteEvents`", notes}} {
		slices.Sort(r.d)
		q := func(p float64) time.Duration { return r.d[min(len(r.d)-1, int(p*float64(len(r.d))))] }
		fmt.Fprintf(w, "| %s | %v | %v | %v | %v |\n", r.name, q(0.5).Round(100*time.Microsecond), q(0.95).Round(100*time.Microsecond), r.d[len(r.d)-1].Round(100*time.Microsecond), writeThroughInterval)
	}
}
