package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of 3 masters and 3 replicas, each its own
// redis-server process, with a 1 s node timeout: a killed master is replaced
// by its replica within a few seconds.
type Cluster struct {
	URL     string    // redis-cluster://host:port,host:port,... (every node)
	Masters []*Server // as created; after a failover a replica is master
	Nodes   []*Server // masters first, then their replicas
}

// StartCluster starts a Cluster for tb (redis-server and redis-cli on the
// PATH), ready when every node says cluster_state:ok.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	need(tb, "redis-server", "redis-cli")
	c := &Cluster{}
	var addrs []string
	for range 6 {
		s := StartWith(tb, []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0",
			"--cluster-require-full-coverage", "no"}...)
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.addr)
	}
	c.Masters = c.Nodes[:3]
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, lastLines(string(out), 10))
	}
	c.URL = "redis-cluster://" + strings.Join(addrs, ",")
	c.WaitHealthy(tb)
	return c
}

// WaitHealthy waits (30 s at most) until every running node reports
// cluster_state:ok and no failed master holds a slot.
func (c *Cluster) WaitHealthy(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok := true
		for _, n := range c.Nodes {
			if n.cmd == nil {
				continue
			}
			info, err := n.command("CLUSTER", "INFO")
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				ok = false
				break
			}
			// No slot left on a failed master (cluster_state is ok
			// before the failover when coverage is not required).
			nodes, err := n.command("CLUSTER", "NODES")
			if err != nil {
				ok = false
				break
			}
			for line := range strings.SplitSeq(nodes, "\n") {
				f := strings.Fields(line)
				if len(f) > 8 && strings.Contains(f[2], "master") && strings.Contains(f[2], "fail") {
					ok = false
				}
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatal("redis cluster not healthy within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Sentinel is a master, its replica and 3 sentinels watching them (master
// name "mymaster", down after 1 s, quorum 2).
type Sentinel struct {
	URL       string // redis-sentinel://s1,s2,s3/mymaster
	Master    *Server
	Replica   *Server
	Sentinels []*Server
}

// StartSentinel starts a Sentinel set for tb, ready when every sentinel
// knows the master and its replica is in sync.
func StartSentinel(tb testing.TB) *Sentinel {
	tb.Helper()
	need(tb, "redis-server")
	st := &Sentinel{Master: StartWith(tb)}
	host, port, _ := net.SplitHostPort(st.Master.addr)
	st.Replica = StartWith(tb, "--replicaof", host, port)
	var addrs []string
	for range 3 {
		addr := freeAddr(tb)
		dir := tb.TempDir()
		conf := filepath.Join(dir, "sentinel.conf")
		_, sport, _ := net.SplitHostPort(addr)
		text := fmt.Sprintf("port %s\nbind 127.0.0.1\nsentinel monitor mymaster %s %s 2\nsentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 5000\n", sport, host, port)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			tb.Fatal(err)
		}
		s := &Server{URL: "redis://" + addr, addr: addr, dir: dir, tb: tb, sentinelConf: conf}
		s.Restart()
		tb.Cleanup(s.Stop)
		st.Sentinels = append(st.Sentinels, s)
		addrs = append(addrs, addr)
	}
	st.URL = "redis-sentinel://" + strings.Join(addrs, ",") + "/mymaster"
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := st.Master.command("INFO", "replication")
		if err == nil && strings.Contains(info, "connected_slaves:1") && strings.Contains(info, "state=online") {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("replica not in sync within 30s: %s %v", info, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return st
}

// command runs one command on the server and returns its reply as text.
func (s *Server) command(args ...any) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: s.addr, DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	v, err := c.Do(ctx, args...).Result()
	return fmt.Sprint(v), err
}

func need(tb testing.TB, bins ...string) {
	tb.Helper()
	for _, b := range bins {
		if _, err := exec.LookPath(b); err != nil {
			unavailable(tb, "no "+b+" on the PATH")
		}
	}
}

// MasterAddr is the master's address as the first sentinel that answers
// knows it ("" if none answers).
func (st *Sentinel) MasterAddr() string {
	for _, s := range st.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.addr, DialTimeout: time.Second, ReadTimeout: time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		v, err := c.GetMasterAddrByName(ctx, "mymaster").Result()
		cancel()
		c.Close()
		if err == nil && len(v) == 2 {
			return v[0] + ":" + v[1]
		}
	}
	return ""
}
