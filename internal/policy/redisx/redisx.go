// Package redisx is the facade's one Redis client, shared by every part
// that keeps state in Redis across replicas (rate budgets, persisted
// queries). Redis is never allowed to fail a request: every operation runs
// with a bounded time (Options.OpTimeout) and no retries. A refused or broken
// connection or an error reply marks Redis degraded at once, and
// TimeoutsToDegrade timed-out operations in a row do (not Redis refusing one
// operation for what one key holds: IsKeyError). While degraded, Do refuses
// at once with ErrUnavailable, without touching the network, and callers use
// their local state; a background prober PINGs Redis every ProbeInterval
// and marks it healthy again after ProbesToRecover answers in a row. With a
// Cluster, health is kept per master for DoKey (see Client). Each
// transition is logged once (WARN when degraded, INFO when back) and Status
// reports it for /readyz.
//
// A Redis at its maxclients accepts a connection and closes it at once, with
// "-ERR max number of clients reached": it is up, and the connections the
// client holds still work. So a new connection refused that way never
// degrades a node by itself: the operation that asked for it waits, within its
// OpTimeout, for one of the pool's connections to come free (nothing was sent
// on the refused one), and only an operation that found none by then counts,
// as a timeout does (TimeoutsToDegrade in a row). The first refusal of an
// episode is logged once (WARN). A new connection closed before it answered
// anything, for another reason, counts as a timeout too.
//
// Accepted URLs (Open):
//
//	redis://[[user]:password@]host[:port][/db][?option=value&...]
//	rediss://...                  the same over TLS
//	redis://[[user]:password@]host1[:port],host2[:port][,...][?option=value&...]
//	                              Redis Cluster: two or more seed addresses (or
//	                              redis://host:port?addr=host2:port&addr=...)
//	redis-cluster://[[user]:password@]host[:port][,...][?option=value&...]
//	rediss-cluster://...          Redis Cluster from one seed or more
//	redis-sentinel://[[user]:password@]host1[:26379][,host2[:26379]...]/master[?db=N&sentinel_username=u&sentinel_password=p&option=value&...]
//	rediss-sentinel://...         Sentinel; user and password are the master's
//
// The options are go-redis's URL options (client_name, protocol, pool_size,
// ...; see redis.ParseURL and redis.ParseClusterURL). Timeouts and retries
// are not taken from the URL: they come from Options.
//
// Importing redisx sends go-redis's own log lines (one per failed dial, for
// instance) to slog.Default at DEBUG level: the transitions are what this
// package logs.
package redisx

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

func init() { redis.SetLogger(debugLogger{}) }

// debugLogger passes go-redis's log lines to slog.Default at DEBUG level.
type debugLogger struct{}

func (debugLogger) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}

// ErrUnavailable is returned by Do while Redis is degraded, and wraps the
// error of the operation that degraded it.
var ErrUnavailable = errors.New("redis unavailable")

// DefaultOpTimeout bounds one operation when Options.OpTimeout is zero: a
// loaded machine may hold a healthy Redis's answer for tens of
// milliseconds, so the bound is generous; a dead server is noticed at once
// anyway (its connection is refused or reset).
const DefaultOpTimeout = 500 * time.Millisecond

// ProbeInterval is how often a degraded node is PINGed.
const ProbeInterval = 250 * time.Millisecond

// Hysteresis: a node is degraded by TimeoutsToDegrade operations in a row
// that ran out of time (one slow answer on a loaded machine is not an
// outage), or at once by a refused or broken connection or an error reply
// that is not about one key (LOADING, READONLY, CLUSTERDOWN, ...); it is
// healthy again after ProbesToRecover successful PINGs in a row.
const (
	TimeoutsToDegrade = 3
	ProbesToRecover   = 2
)

// Options tune a Client.
type Options struct {
	// Logger receives the transitions (nil: slog.Default()).
	Logger *slog.Logger
	// OpTimeout bounds each operation, connecting included for the caller
	// (0: DefaultOpTimeout).
	OpTimeout time.Duration
}

// Client is a Redis client with a health state per node: standalone and
// Sentinel have one node; a Cluster has one per master (the operations of
// DoKey are judged by the master holding the key's slot, so a master
// failing over degrades only the keys it holds) and one for the keyless
// operations of Do. Safe for concurrent use.
type Client struct {
	rdb      redis.UniversalClient
	subs     redis.UniversalClient // rdb's twin in RESP2, for Subscribe only
	cluster  *redis.ClusterClient  // rdb, when a Cluster
	log      *slog.Logger
	timeout  time.Duration
	desc     string // the servers, without credentials
	addr     string // standalone: the server's address
	password []string

	// While Redis refuses new connections (maxclients), operations take
	// turns on the connections open (lane). open counts the connections
	// Redis answered on and that are not closed; refusedAt is the last
	// refusal (Unix ns), loggedAt the last one logged.
	open                atomic.Int32
	refusedAt, loggedAt atomic.Int64
	lane                lane

	// down counts the degraded nodes: Healthy's fast path.
	down   atomic.Int32
	timing atomic.Int32 // nodes with timeouts in a row (succeeded has nothing to clear at 0)

	mu     sync.Mutex
	nodes  map[string]*node
	since  time.Time // the last transition of any node (Open at first)
	closed bool

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the probers
}

// node is the health of one server (mu held).
type node struct {
	name     string // "" (the one server), "*" (a Cluster's keyless operations) or a master's address
	degraded bool
	timeouts int // operations in a row that timed out
	since    time.Time
	lastErr  string
}

// anyNode names a Cluster's keyless operations; oneNode, the only server
// of standalone and Sentinel.
const (
	oneNode = ""
	anyNode = "*"
)

// Status is the health of a Client, for /readyz.
type Status struct {
	// Healthy is false while a node is degraded.
	Healthy bool `json:"healthy"`
	// Since is when the client entered this state (Open, or the last transition).
	Since time.Time `json:"since"`
	// LastError is a degraded node's failure, then its last probe's
	// ("" while healthy).
	LastError string `json:"lastError,omitempty"`
	// Degraded names the degraded Cluster masters (addresses; "*" for the
	// keyless operations). Empty otherwise.
	Degraded []string `json:"degraded,omitempty"`
}

// Open parses rawURL (see the package doc), builds the client and PINGs
// Redis once (within OpTimeout). Only a URL it cannot use is an error: an
// unreachable Redis gives a degraded client, probed until it answers.
func Open(rawURL string, o Options) (*Client, error) {
	uo, desc, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	applyTimeouts(uo, o.OpTimeout)
	c := &Client{
		log:     o.Logger,
		timeout: o.OpTimeout,
		desc:    desc,
		since:   time.Now(),
		nodes:   map[string]*node{},
	}
	// A Sentinel set over TLS dials its sentinels in clear and the master
	// over TLS through one Dialer option, which cannot tell them apart:
	// go-redis's own dialer is kept there.
	if uo.MasterName == "" || uo.TLSConfig == nil {
		uo.Dialer = c.dialer(uo)
	}
	c.rdb = newClient(uo)
	subs := *uo
	subs.Protocol = 2 // see Subscribe
	c.subs = newClient(&subs)
	c.cluster, _ = c.rdb.(*redis.ClusterClient)
	for _, p := range []string{uo.Password, uo.SentinelPassword} {
		if p != "" {
			c.password = append(c.password, p)
		}
	}
	if c.cluster == nil && uo.MasterName == "" {
		c.addr = uo.Addrs[0]
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	// A server that does not answer at start is degraded at once.
	octx, cancel := context.WithTimeout(c.ctx, c.timeout)
	if err := c.rdb.Ping(octx).Err(); err != nil {
		c.failed(c.keyless(), &unreachable{err})
	}
	cancel()
	return c, nil
}

// applyTimeouts makes every operation short and never retried. A new
// connection may take longer than one operation (TCP, TLS, AUTH): it goes
// on in the background for up to 5 OpTimeouts and serves later operations,
// while the operation that asked for it gives up at OpTimeout.
func applyTimeouts(uo *redis.UniversalOptions, op time.Duration) {
	uo.DialTimeout = 5 * op
	uo.ReadTimeout = op
	uo.WriteTimeout = op
	uo.PoolTimeout = op
	uo.ContextTimeoutEnabled = true
	uo.MaxRetries = -1
	// Hitless-upgrade notifications (Redis Enterprise) would add handoff
	// goroutines and a CLIENT command per connection; not needed here.
	uo.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

// newClient builds the client of uo, as redis.NewUniversalClient does,
// with one dial attempt per connection for a server or a Cluster's nodes:
// go-redis's default (5 attempts, 100 ms apart) makes a dead server look
// like a slow one for half a second at every dial. (A Sentinel's master
// connections keep the default: go-redis offers no setting for them.)
func newClient(uo *redis.UniversalOptions) redis.UniversalClient {
	oneDial := func(o *redis.Options) {
		o.DialerRetries, o.DialerRetryTimeout = 1, time.Millisecond
	}
	switch {
	case uo.MasterName != "":
		return redis.NewUniversalClient(uo)
	case len(uo.Addrs) > 1 || uo.IsClusterMode:
		co := uo.Cluster()
		co.NewClient = func(o *redis.Options) *redis.Client {
			oneDial(o)
			return redis.NewClient(o)
		}
		return redis.NewClusterClient(co)
	default:
		o := uo.Simple()
		oneDial(o)
		return redis.NewClient(o)
	}
}

// Redis returns the underlying client. Operations through it bypass the
// health state: use Do.
func (c *Client) Redis() redis.UniversalClient { return c.rdb }

// Subscribe returns a PubSub of channels on a connection of its own
// (go-redis's PubSub: it connects again, and subscribes its channels again,
// after a failure). Its connection speaks RESP2 whatever the URL says: over
// RESP3, go-redis v9.17 reads the name of a pub/sub push from what is
// buffered, and drops the whole message when the buffer ends inside the
// name (a subscription's confirmation, or a message, lost now and then on a
// busy connection). Operations through it bypass the health state.
func (c *Client) Subscribe(ctx context.Context, channels ...string) *redis.PubSub {
	return c.subs.Subscribe(ctx, channels...)
}

// OpTimeout is the bound of each operation.
func (c *Client) OpTimeout() time.Duration { return c.timeout }

// Do runs op with a context bounded by OpTimeout, judged by the health of
// the keyless node (the server; with a Cluster, "*"). op must return only
// the errors of its Redis commands. Do returns op's error as is when it is
// nil or redis.Nil, when ctx itself ended (the caller gave up: not a Redis
// failure), or when it is a key error (IsKeyError: that key's operation
// fails, the others go on); any other failure counts against the node (see
// TimeoutsToDegrade) and is returned wrapping ErrUnavailable. While the
// node is degraded, Do returns ErrUnavailable at once and op is not called.
func (c *Client) Do(ctx context.Context, op func(ctx context.Context, r redis.UniversalClient) error) error {
	return c.run(ctx, c.keyless(), op)
}

// keyless names the node of keyless operations.
func (c *Client) keyless() string {
	if c.cluster != nil {
		return anyNode
	}
	return oneNode
}

// unreachable is a failure that degrades at once: the server did not
// accept a connection.
type unreachable struct{ err error }

func (u *unreachable) Error() string { return u.err.Error() }
func (u *unreachable) Unwrap() error { return u.err }

// DoKey is Do for an operation on key (and keys of its hash slot): with a
// Cluster, it is judged by the health of the master holding key's slot.
func (c *Client) DoKey(ctx context.Context, key string, op func(ctx context.Context, r redis.UniversalClient) error) error {
	return c.run(ctx, c.nodeOf(ctx, key), op)
}

// nodeOf names the node of key: the master of its slot in a Cluster (as
// the client last learned the slots), else the one server.
func (c *Client) nodeOf(ctx context.Context, key string) string {
	if c.cluster == nil {
		return oneNode
	}
	// Cached slots answer at once; without any, loading them is bounded.
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	m, err := c.cluster.MasterForKey(ctx, key)
	if err != nil {
		return anyNode
	}
	return m.Options().Addr
}

// HealthyKey reports whether DoKey(key) will try Redis.
func (c *Client) HealthyKey(key string) bool {
	if c.down.Load() == 0 {
		return true
	}
	name := c.nodeOf(c.ctx, key)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[name]
	return n == nil || !n.degraded
}

func (c *Client) run(ctx context.Context, name string, op func(ctx context.Context, r redis.UniversalClient) error) error {
	if c.down.Load() != 0 || c.closedNow() {
		c.mu.Lock()
		n := c.nodes[name]
		refused := c.closed || (n != nil && n.degraded)
		c.mu.Unlock()
		if refused {
			return ErrUnavailable
		}
	}
	octx, cancel := context.WithTimeout(ctx, c.timeout)
	var err error
	if c.refusing() {
		err = c.inLane(octx, op)
	} else {
		err = op(octx, c.rdb)
	}
	if isMaxClients(err) && octx.Err() == nil {
		c.refused()
		err = c.inLane(octx, op)
	}
	cancel()
	if err == nil || errors.Is(err, redis.Nil) || IsKeyError(err) {
		c.succeeded(name)
		return err
	}
	if ctx.Err() != nil {
		return err
	}
	c.failed(name, err)
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

func (c *Client) closedNow() bool {
	select {
	case <-c.ctx.Done():
		return true
	default:
		return false
	}
}

// refusalEpisode is how long after Redis last refused a new connection
// the operations keep taking turns on the open ones.
const refusalEpisode = time.Second

// refusing reports whether Redis refused a new connection within the last
// refusalEpisode.
func (c *Client) refusing() bool {
	at := c.refusedAt.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < refusalEpisode
}

// refused notes a refusal at maxclients, logged at most once a minute.
func (c *Client) refused() {
	now := time.Now().UnixNano()
	c.refusedAt.Store(now)
	if last := c.loggedAt.Load(); now-last >= int64(time.Minute) && c.loggedAt.CompareAndSwap(last, now) {
		c.log.Warn("redis refuses new connections (maxclients reached): operations take turns on the open ones", "redis", c.desc, "open", c.open.Load())
	}
}

// inLane runs op in its turn among the operations of a refusal episode:
// first come, first served, as many at a time as connections are open, so
// that each finds one free rather than asking Redis for another. A
// refusal in its turn (a connection closed meanwhile) is tried again
// while ctx lasts: nothing was sent on the refused connection.
func (c *Client) inLane(ctx context.Context, op func(ctx context.Context, r redis.UniversalClient) error) error {
	if err := c.lane.enter(ctx, c.capacity); err != nil {
		return err
	}
	defer c.lane.leave(c.capacity)
	for pause := time.Millisecond; ; pause = min(2*pause, 10*time.Millisecond) {
		err := op(ctx, c.rdb)
		if !isMaxClients(err) {
			return err
		}
		c.refused()
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// capacity is how many operations take turns at once: the connections
// open, at least one (which asks Redis for a connection when none is).
func (c *Client) capacity() int { return max(1, int(c.open.Load())) }

// lane is a first-come-first-served gate of a changing capacity.
type lane struct {
	mu    sync.Mutex
	busy  int
	queue []chan struct{}
}

// enter waits for a turn until ctx ends.
func (l *lane) enter(ctx context.Context, capacity func() int) error {
	l.mu.Lock()
	if len(l.queue) == 0 && l.busy < capacity() {
		l.busy++
		l.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	l.queue = append(l.queue, ch)
	l.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.Index(l.queue, ch); i >= 0 {
		l.queue = slices.Delete(l.queue, i, i+1)
		return ctx.Err()
	}
	// Granted meanwhile: hand the turn on.
	l.busy--
	l.admit(capacity())
	return ctx.Err()
}

// leave ends a turn.
func (l *lane) leave(capacity func() int) {
	l.mu.Lock()
	l.busy--
	l.admit(capacity())
	l.mu.Unlock()
}

// widen admits waiters after the capacity grew.
func (l *lane) widen(capacity func() int) {
	l.mu.Lock()
	l.admit(capacity())
	l.mu.Unlock()
}

// admit grants turns in order while there is room (l.mu held).
func (l *lane) admit(capacity int) {
	for len(l.queue) > 0 && l.busy < capacity {
		close(l.queue[0])
		l.queue = l.queue[1:]
		l.busy++
	}
}

// IsKeyError reports whether err is Redis refusing one operation for what a
// key holds: a value of another type (WRONGTYPE, also from a script), a
// value that is not the number the command needs, or a Lua error in a
// script working on such a value. Redis answered: it is up, and only that
// key's operation fails.
func IsKeyError(err error) bool {
	var re redis.Error
	if err == nil || !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "WRONGTYPE ") || strings.HasPrefix(msg, "ERR value is not ") ||
		strings.HasPrefix(msg, "ERR user_script:")
}

// isTimeout reports whether err is an operation running out of time (the
// server may only be slow), or a new connection closed before it answered
// anything (a Redis at its maxclients), as opposed to a refused or broken
// established connection or an error reply.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if _, ok := errors.AsType[*closedAtOnce](err); ok {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Healthy reports whether every node is healthy.
func (c *Client) Healthy() bool { return c.down.Load() == 0 && !c.closedNow() }

// Status returns the health state.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{Healthy: !c.closed, Since: c.since}
	for _, n := range c.nodes {
		if n.degraded {
			st.Healthy = false
			st.LastError = n.lastErr
			if c.cluster != nil {
				st.Degraded = append(st.Degraded, n.name)
			}
		}
	}
	if c.closed && st.LastError == "" {
		st.LastError = "closed"
	}
	return st
}

// String names the servers, without credentials.
func (c *Client) String() string { return c.desc }

// Close stops the probers, waits for them and closes the connections. Do
// returns ErrUnavailable after Close.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	_ = c.subs.Close()
	if err := c.rdb.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// succeeded clears the node's timeouts in a row.
func (c *Client) succeeded(name string) {
	if c.timing.Load() == 0 {
		return // the common case: no lock on a healthy operation
	}
	c.mu.Lock()
	if n := c.nodes[name]; n != nil && !n.degraded && n.timeouts > 0 {
		n.timeouts = 0
		c.timing.Add(-1)
	}
	c.mu.Unlock()
}

// failed counts err against the node, and degrades it (logging and
// starting its prober) when err is not a timeout or ends TimeoutsToDegrade
// timeouts in a row.
func (c *Client) failed(name string, err error) {
	msg := c.redact(err.Error())
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	n := c.nodes[name]
	if n == nil {
		n = &node{name: name}
		c.nodes[name] = n
	}
	n.lastErr = msg
	if n.degraded {
		return
	}
	var u *unreachable
	if isTimeout(err) && !errors.As(err, &u) {
		n.timeouts++
		if n.timeouts == 1 {
			c.timing.Add(1)
			// A dead server also shows as a timeout (go-redis redials
			// within the operation's time): try a connection of our own.
			c.wg.Add(1)
			go c.dialCheck(name)
		}
		if n.timeouts < TimeoutsToDegrade {
			return
		}
	}
	if n.timeouts > 0 {
		c.timing.Add(-1)
	}
	n.degraded, n.timeouts = true, 0
	n.since, c.since = time.Now(), time.Now()
	c.down.Add(1)
	args := []any{"redis", c.desc, "err", msg}
	if c.cluster != nil {
		args = append(args, "node", name)
	}
	c.log.Warn("redis unavailable: degraded to local state", args...)
	c.wg.Add(1)
	go c.probe(n)
}

// dialCheck degrades the node name when a TCP connection to it fails
// within OpTimeout (standalone servers and Cluster masters: a Sentinel's
// master is known to go-redis only).
func (c *Client) dialCheck(name string) {
	defer c.wg.Done()
	addr := name
	switch name {
	case anyNode:
		return
	case oneNode:
		if addr = c.addr; addr == "" {
			return
		}
	}
	d := net.Dialer{Timeout: c.timeout}
	conn, err := d.DialContext(c.ctx, "tcp", addr)
	if err == nil {
		conn.Close()
		return
	}
	if c.ctx.Err() == nil {
		c.failed(name, &unreachable{err})
	}
}

// probe PINGs n every ProbeInterval until it answers ProbesToRecover times
// in a row, or Close. A Cluster's prober reloads the slots first: a master
// that no longer holds any slot (replaced by its replica) is dropped, its
// keys being the new master's now.
func (c *Client) probe(n *node) {
	defer c.wg.Done()
	t := time.NewTicker(ProbeInterval)
	defer t.Stop()
	ok := 0
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.timeout)
		gone, err := c.ping(ctx, n.name)
		cancel()
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		if err != nil && !gone {
			n.lastErr, ok = c.redact(err.Error()), 0
			c.mu.Unlock()
			continue
		}
		if ok++; ok < ProbesToRecover && !gone {
			c.mu.Unlock()
			continue
		}
		down := time.Since(n.since)
		n.degraded, n.lastErr, n.timeouts = false, "", 0
		c.since = time.Now()
		if gone {
			delete(c.nodes, n.name)
		}
		c.down.Add(-1)
		args := []any{"redis", c.desc, "down", down.Round(time.Millisecond).String()}
		if c.cluster != nil {
			args = append(args, "node", n.name)
		}
		c.log.Info("redis available again", args...)
		c.mu.Unlock()
		return
	}
}

// ping PINGs the node name; gone reports a Cluster master that holds no
// slot any more.
func (c *Client) ping(ctx context.Context, name string) (gone bool, err error) {
	if c.cluster == nil {
		return false, c.rdb.Ping(ctx).Err()
	}
	if name == anyNode {
		return false, c.cluster.Ping(ctx).Err()
	}
	// ForEachMaster reloads the slots first.
	found := false
	var mu sync.Mutex
	err = c.cluster.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		if m.Options().Addr != name {
			return nil
		}
		mu.Lock()
		found = true
		mu.Unlock()
		return m.Ping(ctx).Err()
	})
	if err == nil && !found {
		return true, nil
	}
	return false, err
}

// redact removes the URL's passwords from msg (defence in depth: go-redis
// errors are not known to quote them).
func (c *Client) redact(msg string) string {
	for _, p := range c.password {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}

// maxClientsReply starts what Redis writes to a connection it accepts at
// its maxclients, before closing it.
var maxClientsReply = []byte("-ERR max number of clients")

// closedAtOnce is the error of a new connection that failed before Redis
// answered anything on it: nothing sent on it was run. MaxClients: Redis
// said it holds its maxclients. It does not unwrap to its cause: go-redis
// unwraps a connection's first error once, and this one must stay.
type closedAtOnce struct {
	MaxClients bool
	err        error
}

func (e *closedAtOnce) Error() string {
	if e.MaxClients {
		return "redis refused a new connection: max number of clients reached"
	}
	return "redis closed a new connection before answering: " + e.err.Error()
}

// isMaxClients reports whether err is a new connection Redis refused at its
// maxclients.
func isMaxClients(err error) bool {
	e, ok := errors.AsType[*closedAtOnce](err)
	return ok && e.MaxClients
}

// dialer dials as go-redis's own dialer does (TCP, TLS when configured) and
// watches each connection until Redis first answers on it (watchedConn).
func (c *Client) dialer(uo *redis.UniversalOptions) func(ctx context.Context, network, addr string) (net.Conn, error) {
	nd := &net.Dialer{Timeout: uo.DialTimeout, KeepAlive: 5 * time.Minute}
	conf := uo.TLSConfig
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var conn net.Conn
		var err error
		if conf == nil {
			conn, err = nd.DialContext(ctx, network, addr)
		} else {
			conn, err = (&tls.Dialer{NetDialer: nd, Config: conf}).DialContext(ctx, network, addr)
		}
		if err != nil {
			return nil, err
		}
		w := &watchedConn{Conn: conn, c: c}
		if sc, ok := conn.(syscall.Conn); ok {
			// go-redis checks an idle connection's socket before reusing it.
			return &watchedSysConn{watchedConn: w, sc: sc}, nil
		}
		return w, nil
	}
}

// watchedConn is a connection to Redis that tells apart its failures before
// Redis first answered on it (closedAtOnce: a Redis at its maxclients
// accepts and closes) from those of an established connection.
type watchedConn struct {
	net.Conn
	c        *Client
	answered atomic.Bool
	closed   atomic.Bool
	failed   atomic.Pointer[closedAtOnce] // once set, every Read and Write returns it
}

func (w *watchedConn) Read(p []byte) (int, error) {
	if w.answered.Load() {
		return w.Conn.Read(p)
	}
	if e := w.failed.Load(); e != nil {
		return 0, e
	}
	n, err := w.Conn.Read(p)
	switch {
	case n > 0 && bytes.HasPrefix(p[:n], maxClientsReply):
		return 0, w.fail(&closedAtOnce{MaxClients: true, err: errors.New(string(bytes.TrimSpace(p[:n])))})
	case n > 0:
		if !w.answered.Swap(true) && !w.closed.Load() {
			w.c.open.Add(1)
			w.c.lane.widen(w.c.capacity)
		}
	case err != nil && !isTimeout(err):
		return 0, w.fail(&closedAtOnce{err: err})
	}
	return n, err
}

func (w *watchedConn) Write(p []byte) (int, error) {
	if !w.answered.Load() {
		if e := w.failed.Load(); e != nil {
			return 0, e
		}
	}
	n, err := w.Conn.Write(p)
	if err != nil && !w.answered.Load() && !isTimeout(err) {
		return n, w.fail(&closedAtOnce{err: err})
	}
	return n, err
}

func (w *watchedConn) Close() error {
	if !w.closed.Swap(true) && w.answered.Load() {
		w.c.open.Add(-1)
	}
	return w.Conn.Close()
}

// fail keeps the connection's first failure before an answer.
func (w *watchedConn) fail(e *closedAtOnce) error {
	w.failed.CompareAndSwap(nil, e)
	return w.failed.Load()
}

// watchedSysConn is a watchedConn over a connection with a file descriptor.
type watchedSysConn struct {
	*watchedConn
	sc syscall.Conn
}

func (w *watchedSysConn) SyscallConn() (syscall.RawConn, error) { return w.sc.SyscallConn() }

// parseURL turns rawURL into client options and a description without
// credentials. Its errors never quote rawURL.
func parseURL(rawURL string) (*redis.UniversalOptions, string, error) {
	// url.Parse takes no host list: parse the URL with a placeholder host.
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, "", errors.New("redis URL: no scheme://")
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	userinfo, hostList := "", rest[:end]
	if i := strings.LastIndex(hostList, "@"); i >= 0 {
		userinfo, hostList = hostList[:i+1], hostList[i+1:]
	}
	u, err := url.Parse(scheme + "://" + userinfo + "placeholder" + rest[end:])
	if err != nil {
		return nil, "", fmt.Errorf("redis URL: %v", clean(err))
	}
	scheme, mode, _ := strings.Cut(u.Scheme, "-")
	if scheme != "redis" && scheme != "rediss" {
		return nil, "", fmt.Errorf("redis URL: scheme %q: want redis, rediss, redis-cluster or redis-sentinel (or rediss-...)", u.Scheme)
	}
	if hostList == "" {
		return nil, "", errors.New("redis URL: no host")
	}
	hosts := strings.Split(hostList, ",")
	switch {
	case mode == "sentinel":
		return parseSentinel(u, scheme, hosts)
	case mode == "cluster" || len(hosts) > 1 || u.Query().Has("addr"):
		return parseCluster(u, scheme, hosts)
	case mode != "":
		return nil, "", fmt.Errorf("redis URL: scheme %q: want redis, rediss, redis-cluster or redis-sentinel (or rediss-...)", u.Scheme)
	}
	addrs, err := hostPorts(hosts, "6379")
	if err != nil {
		return nil, "", err
	}
	u.Host = addrs[0]
	o, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, "", fmt.Errorf("redis URL: %v", clean(err))
	}
	uo := &redis.UniversalOptions{
		Addrs:           []string{o.Addr},
		DB:              o.DB,
		ClientName:      o.ClientName,
		Protocol:        o.Protocol,
		Username:        o.Username,
		Password:        o.Password,
		PoolFIFO:        o.PoolFIFO,
		PoolSize:        o.PoolSize,
		MinIdleConns:    o.MinIdleConns,
		MaxIdleConns:    o.MaxIdleConns,
		MaxActiveConns:  o.MaxActiveConns,
		ConnMaxIdleTime: o.ConnMaxIdleTime,
		ConnMaxLifetime: o.ConnMaxLifetime,
		TLSConfig:       o.TLSConfig,
	}
	return uo, fmt.Sprintf("%s://%s/%d", scheme, o.Addr, o.DB), nil
}

// parseCluster reads a cluster URL: hosts are seeds, more may come as addr
// options; no database but 0.
func parseCluster(u *url.URL, scheme string, hosts []string) (*redis.UniversalOptions, string, error) {
	if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
		return nil, "", fmt.Errorf("redis URL: a cluster has only database 0, not %q", p)
	}
	addrs, err := hostPorts(hosts, "6379")
	if err != nil {
		return nil, "", err
	}
	v := *u
	v.Scheme, v.Host, v.Path = scheme, addrs[0], ""
	q := u.Query()
	for _, a := range addrs[1:] {
		q.Add("addr", a)
	}
	v.RawQuery = q.Encode()
	o, err := redis.ParseClusterURL(v.String())
	if err != nil {
		return nil, "", fmt.Errorf("redis URL: %v", clean(err))
	}
	uo := &redis.UniversalOptions{
		Addrs:           o.Addrs,
		IsClusterMode:   true,
		ClientName:      o.ClientName,
		Protocol:        o.Protocol,
		Username:        o.Username,
		Password:        o.Password,
		MaxRedirects:    o.MaxRedirects,
		ReadOnly:        o.ReadOnly,
		RouteByLatency:  o.RouteByLatency,
		RouteRandomly:   o.RouteRandomly,
		PoolFIFO:        o.PoolFIFO,
		PoolSize:        o.PoolSize,
		MinIdleConns:    o.MinIdleConns,
		MaxIdleConns:    o.MaxIdleConns,
		MaxActiveConns:  o.MaxActiveConns,
		ConnMaxIdleTime: o.ConnMaxIdleTime,
		ConnMaxLifetime: o.ConnMaxLifetime,
		TLSConfig:       o.TLSConfig,
	}
	if uo.TLSConfig != nil {
		uo.TLSConfig.ServerName = "" // each node's own name, not the first seed's
	}
	return uo, fmt.Sprintf("%s-cluster://%s", scheme, strings.Join(o.Addrs, ",")), nil
}

// parseSentinel reads a sentinel URL: hosts are the sentinels, the path
// names the master.
func parseSentinel(u *url.URL, scheme string, hosts []string) (*redis.UniversalOptions, string, error) {
	master := strings.Trim(u.Path, "/")
	if master == "" || strings.Contains(master, "/") {
		return nil, "", errors.New("redis URL: a sentinel URL names its master as its path: redis-sentinel://host:26379,.../mymaster")
	}
	addrs, err := hostPorts(hosts, "26379")
	if err != nil {
		return nil, "", err
	}
	q := u.Query()
	sentinelUser, sentinelPassword := q.Get("sentinel_username"), q.Get("sentinel_password")
	q.Del("sentinel_username")
	q.Del("sentinel_password")
	// The other options are a master connection's: let ParseURL read them.
	v := *u
	v.Scheme, v.Host, v.Path, v.RawQuery = scheme, addrs[0], "", q.Encode()
	o, err := redis.ParseURL(v.String())
	if err != nil {
		return nil, "", fmt.Errorf("redis URL: %v", clean(err))
	}
	uo := &redis.UniversalOptions{
		Addrs:            addrs,
		MasterName:       master,
		DB:               o.DB,
		ClientName:       o.ClientName,
		Protocol:         o.Protocol,
		Username:         o.Username,
		Password:         o.Password,
		SentinelUsername: sentinelUser,
		SentinelPassword: sentinelPassword,
		PoolFIFO:         o.PoolFIFO,
		PoolSize:         o.PoolSize,
		MinIdleConns:     o.MinIdleConns,
		MaxIdleConns:     o.MaxIdleConns,
		MaxActiveConns:   o.MaxActiveConns,
		ConnMaxIdleTime:  o.ConnMaxIdleTime,
		ConnMaxLifetime:  o.ConnMaxLifetime,
		TLSConfig:        o.TLSConfig,
	}
	if uo.TLSConfig != nil {
		uo.TLSConfig.ServerName = "" // each server's own name, not the first sentinel's
	}
	return uo, fmt.Sprintf("%s-sentinel://%s/%s/%d", scheme, strings.Join(addrs, ","), master, o.DB), nil
}

// hostPorts checks each host[:port] and gives it port def when it has none.
func hostPorts(hosts []string, def string) ([]string, error) {
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		if h == "" {
			return nil, errors.New("redis URL: an empty address in the host list")
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			host, port = strings.Trim(h, "[]"), def
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || host == "" {
			return nil, fmt.Errorf("redis URL: bad address %q", h)
		}
		out = append(out, net.JoinHostPort(host, port))
	}
	return out, nil
}

// clean drops the URL that a *url.Error quotes, password included.
func clean(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
