// Package redistest gives tests a real Redis server: its own redis-server
// process on a free loopback port when the binary is on the PATH (so a test
// may stop and restart it), else the server at REDIS_URL. Without either the
// test is skipped with a message saying how to run it — unless REDIS_REQUIRED
// is set (CI sets it), when it fails instead.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a Redis server for one test.
type Server struct {
	URL  string // redis://127.0.0.1:port/0
	addr string
	dir  string
	args []string // redis-server's arguments after the port's
	// sentinelConf, for a sentinel, is its configuration file.
	sentinelConf string
	cmd          *exec.Cmd // nil for REDIS_URL's server
	tb           testing.TB
}

// unavailable skips (or, under REDIS_REQUIRED, fails) tb.
func unavailable(tb testing.TB, why string) {
	tb.Helper()
	msg := why + ": this test needs Redis. Install redis-server (apt-get install redis-server) or set REDIS_URL=redis://host:6379/0"
	if os.Getenv("REDIS_REQUIRED") != "" {
		tb.Fatal(msg + " (REDIS_REQUIRED is set)")
	}
	tb.Skip(msg)
}

// Start returns a Redis server for tb, emptied, and stopped at cleanup when
// it is the test's own.
func Start(tb testing.TB) *Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err == nil {
		return StartOwn(tb)
	}
	url := os.Getenv("REDIS_URL")
	if url == "" {
		unavailable(tb, "no redis-server on the PATH and no REDIS_URL")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatalf("REDIS_URL: %v", err)
	}
	s := &Server{URL: url, addr: opt.Addr, tb: tb}
	s.flush()
	return s
}

// StartOwn starts a redis-server process for tb (needed by tests that stop
// and restart it).
func StartOwn(tb testing.TB) *Server {
	tb.Helper()
	return StartWith(tb)
}

// StartWith starts a redis-server process for tb with extra arguments
// (redis-server's own: "--maxmemory", "1mb", ...).
func StartWith(tb testing.TB, args ...string) *Server {
	tb.Helper()
	need(tb, "redis-server")
	addr := freeAddr(tb)
	s := &Server{URL: "redis://" + addr + "/0", addr: addr, dir: tb.TempDir(), args: args, tb: tb}
	s.Restart()
	tb.Cleanup(s.Stop)
	return s
}

func freeAddr(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// Freeze stops the server's process (SIGSTOP): connections stay open and
// nothing answers, as a hung or swapped-out server. Thaw resumes it.
func (s *Server) Freeze() { s.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT).
func (s *Server) Thaw() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// Client returns a go-redis client of the server, closed at cleanup.
func (s *Server) Client() *redis.Client {
	opt, err := redis.ParseURL(s.URL)
	if err != nil {
		s.tb.Fatal(err)
	}
	c := redis.NewClient(opt)
	s.tb.Cleanup(func() { c.Close() })
	return c
}

// Fill opens idle connections to the server until it refuses one at its
// maxclients (start it with a low "--maxclients") and returns those it
// accepted, closed at cleanup: from then on Redis accepts no new client,
// and closing one of them makes room for one.
func (s *Server) Fill() []net.Conn {
	s.tb.Helper()
	var held []net.Conn
	s.tb.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	for range 10000 {
		conn, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			s.tb.Fatal(err)
		}
		// At its maxclients Redis writes the error and closes the
		// connection at once: the PING may fail to go, or its answer be
		// the error, or nothing.
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, werr := conn.Write([]byte("PING\r\n"))
		line, rerr := bufio.NewReader(conn).ReadString('\n')
		_ = conn.SetDeadline(time.Time{})
		if werr != nil || strings.HasPrefix(line, "-ERR max number of clients") || (rerr != nil && !os.IsTimeout(rerr)) {
			conn.Close()
			return held
		}
		if !strings.HasPrefix(line, "+PONG") {
			s.tb.Fatalf("PING on a raw connection: %q %v", line, rerr)
		}
		held = append(held, conn)
	}
	s.tb.Fatal("redistest: Redis accepted 10000 connections: start it with a low --maxclients")
	return nil
}

// Stop kills the server's process (its own only); the port stays free for
// Restart.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a frozen one too
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server's process again on the same port, with no data.
func (s *Server) Restart() {
	s.tb.Helper()
	if s.dir == "" {
		s.tb.Fatal("redistest: only a test's own server can be restarted")
	}
	s.Stop()
	_, port, _ := net.SplitHostPort(s.addr)
	args := []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log")}
	args = append(args, s.args...)
	if s.sentinelConf != "" {
		args = append([]string{s.sentinelConf, "--sentinel"}, args...)
	}
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		s.tb.Fatalf("redis-server: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := s.ping(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			s.tb.Fatalf("redis-server on %s did not answer: %s", s.addr, lastLines(string(log), 5))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// flush empties the server's current database.
func (s *Server) flush() {
	c := s.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.FlushDB(ctx).Err(); err != nil {
		s.tb.Fatalf("FLUSHDB on %s: %v", s.addr, err)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
