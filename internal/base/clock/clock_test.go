package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// forever is a wait no test outlives: a Sleep that returns did not wait it.
const forever = 24 * time.Hour

func TestSleepNonPositiveDoesNotWait(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, -forever} {
		if err := Sleep(context.Background(), d); err != nil {
			t.Errorf("Sleep(live, %v) = %v, want nil", d, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := Sleep(ctx, d); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep(cancelled, %v) = %v, want context.Canceled", d, err)
		}
	}
}

func TestSleepCancelledContextReturnsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, forever); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep(cancelled, forever) = %v, want context.Canceled", err)
	}
}

func TestSleepExpiredDeadline(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	if err := Sleep(ctx, forever); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sleep(expired, forever) = %v, want context.DeadlineExceeded", err)
	}
}

// TestSleepReturnsWhenCancelledDuringTheWait cancels the context while Sleep
// is waiting (Sleep cannot have finished a 24-hour wait).
func TestSleepReturnsWhenCancelledDuringTheWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Sleep(ctx, forever) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
}

func TestSleepFullWaitReturnsNil(t *testing.T) {
	if err := Sleep(context.Background(), time.Nanosecond); err != nil {
		t.Fatalf("Sleep(live, 1ns) = %v, want nil", err)
	}
}
