// Package childproc runs a service in a child process so that a benchmark
// measures only its own process: the binary (the bench, or a test binary)
// re-executes itself with an environment variable that selects the child's
// role, the child writes one JSON line once it listens (Announce) and serves
// until its stdin closes (ParentGone), which happens when the parent stops
// it or exits. Used by the bench (the REST service, the facade) and by
// restclient's benchmarks of one call through the local REST service.
package childproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// stopWait is how long Stop waits for the process to exit before killing it.
const stopWait = 10 * time.Second

// Process is a running child.
type Process struct {
	Pid  int
	stop func() error
}

// Stop asks the child to exit (its stdin closes; a program started by Start
// gets SIGINT), waits at most 10 s, then kills it.
func (p *Process) Stop() error { return p.stop() }

// StartSelf re-executes this binary with args and env (NAME=value) added to
// this process's environment and waits at most timeout for the one JSON
// line the child writes once it listens, decoded into hello. The child's
// stderr is this process's.
func StartSelf(hello any, timeout time.Duration, args []string, env ...string) (*Process, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Pid: cmd.Process.Pid, stop: func() error {
		_ = stdin.Close()
		return waitOrKill(cmd)
	}}
	read := make(chan error, 1)
	go readHello(stdout, hello, read)
	select {
	case err := <-read:
		if err != nil {
			_ = p.Stop()
			return nil, fmt.Errorf("child hello: %w", err)
		}
		return p, nil
	case <-time.After(timeout):
		_ = p.Stop()
		return nil, fmt.Errorf("child did not start within %v", timeout)
	}
}

// readHello decodes the child's first line into hello, sends the outcome
// on read, then discards the child's stdout until it exits (so a child
// that writes more never blocks). It ends when the child does: a test
// binary whose child lives as long as it does tells goleak to ignore it.
func readHello(stdout io.Reader, hello any, read chan<- error) {
	line, err := bufio.NewReaderSize(stdout, 1<<20).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, hello)
	}
	read <- err
	_, _ = io.Copy(io.Discard, stdout)
}

// Start starts cmd (another program: it is not told to stop by its stdin);
// Stop sends it SIGINT.
func Start(cmd *exec.Cmd) (*Process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Process{Pid: cmd.Process.Pid, stop: func() error {
		_ = cmd.Process.Signal(os.Interrupt)
		return waitOrKill(cmd)
	}}, nil
}

// waitOrKill waits at most stopWait for cmd to exit, then kills it. An exit
// caused by the kill is not an error.
func waitOrKill(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) && !exit.Exited() { // ended by the signal it was sent
			return nil
		}
		return err
	case <-time.After(stopWait):
		_ = cmd.Process.Kill()
		<-done
		return errors.New("child killed: it did not exit within " + stopWait.String())
	}
}

// Announce writes v, in the child, as the one JSON line its parent waits
// for.
func Announce(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(os.Stdout, "%s\n", b)
	return err
}

// ParentGone returns a context cancelled, in the child, when its stdin
// reaches EOF: the parent stopped it or exited.
func ParentGone() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return ctx
}
