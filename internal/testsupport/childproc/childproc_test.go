package childproc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

const roleEnv = "CHILDPROC_TEST_ROLE"

// TestMain lets the test binary play the child: "announce" writes its pid
// and serves until its stdin closes; "silent" never announces.
func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "announce":
		gone := ParentGone()
		if err := Announce(map[string]int{"pid": os.Getpid()}); err != nil {
			os.Exit(3)
		}
		<-gone.Done()
		os.Exit(0)
	case "silent":
		<-ParentGone().Done()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// gone reports whether process pid has exited (and was reaped).
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

func TestStartSelfReadsTheHelloAndStopEndsTheChild(t *testing.T) {
	var hello struct{ Pid int }
	p, err := StartSelf(&hello, time.Minute, []string{"-test.run=^$"}, roleEnv+"=announce")
	if err != nil {
		t.Fatal(err)
	}
	if hello.Pid != p.Pid || p.Pid == os.Getpid() {
		t.Errorf("hello from pid %d, child %d, parent %d", hello.Pid, p.Pid, os.Getpid())
	}
	if gone(p.Pid) {
		t.Fatal("the child exited before Stop")
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v (the child exits 0 when its stdin closes)", err)
	}
	if !gone(p.Pid) {
		t.Error("the child still runs after Stop")
	}
}

func TestStartSelfGivesUpOnASilentChild(t *testing.T) {
	var hello struct{}
	start := time.Now()
	p, err := StartSelf(&hello, 200*time.Millisecond, []string{"-test.run=^$"}, roleEnv+"=silent")
	if err == nil {
		_ = p.Stop()
		t.Fatal("a child that never announced was taken as started")
	}
	if time.Since(start) >= stopWait {
		t.Errorf("gave up after %v: the silent child had to be killed", time.Since(start))
	}
}

func TestStartStopsAProgramWithSIGINT(t *testing.T) {
	p, err := Start(exec.Command("sleep", "60"))
	if err != nil {
		t.Skip("no sleep program:", err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v (ended by the signal it was sent)", err)
	}
	if !gone(p.Pid) {
		t.Error("the program still runs after Stop")
	}
}
