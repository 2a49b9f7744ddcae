package progress

import (
	"strings"
	"testing"
	"time"
)

func TestPlain(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	p := New(&b, false)
	p.Starting("etcd")
	p.Started("etcd", 310*time.Millisecond)
	p.Starting("nodecache/node-1")
	p.Started("nodecache/node-1", 4*time.Millisecond)
	p.Starting("agent/node-1")
	p.Failed()
	lw := p.Writer(&b)
	if _, err := lw.Write([]byte("level=INFO msg=x\n")); err != nil {
		t.Fatal(err)
	}
	p.Ready(1520 * time.Millisecond)
	want := "started etcd in 0.31s\nstarted nodecache/node-1 in 0.00s\nlevel=INFO msg=x\nready in 1.52s\n"
	if got := b.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestLive checks the escape sequences a terminal gets: the live line is
// erased (CR, EL 2) before anything else is written and drawn again after.
func TestLive(t *testing.T) {
	t.Parallel()
	const el = "\r\x1b[2K"
	tests := []struct {
		name string
		run  func(l *Live, c *fakeClock, b *strings.Builder)
		want string
	}{
		{"steps", func(l *Live, c *fakeClock, _ *strings.Builder) {
			l.Starting("etcd")
			c.t = c.t.Add(200 * time.Millisecond)
			l.Tick()
			l.Started("etcd", 310*time.Millisecond)
			l.Ready(time.Second)
		}, el + "⠋ etcd 0.00s" + el + "⠙ etcd 0.20s" + el + "✓ etcd  0.31s\nready in 1.00s\n"},
		{"log line between", func(l *Live, c *fakeClock, b *strings.Builder) {
			l.Starting("certificates")
			c.t = c.t.Add(50 * time.Millisecond)
			if _, err := l.Writer(b).Write([]byte("level=WARN msg=w\n")); err != nil {
				t.Fatal(err)
			}
			l.Started("certificates", 60*time.Millisecond)
		}, el + "⠋ certificates 0.00s" + el + "level=WARN msg=w\n" + el + "⠋ certificates 0.05s" + el + "✓ certificates  0.06s\n"},
		{"two under way", func(l *Live, c *fakeClock, _ *strings.Builder) {
			l.Starting("a")
			l.Starting("b")
			c.t = c.t.Add(time.Second)
			l.Started("a", time.Second)
		}, el + "⠋ a 0.00s" + el + "⠋ a 0.00s, b 0.00s" + el + "✓ a  1.00s\n" + el + "⠋ b 1.00s"},
		{"failed", func(l *Live, c *fakeClock, _ *strings.Builder) {
			l.Starting("cluster-dns")
			c.t = c.t.Add(1500 * time.Millisecond)
			l.Failed()
			l.Tick() // nothing under way: nothing drawn
		}, el + "⠋ cluster-dns 0.00s" + el + "✗ cluster-dns  failed after 1.50s\n"},
		{"tick idle", func(l *Live, _ *fakeClock, _ *strings.Builder) { l.Tick() }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			c := &fakeClock{t: time.Unix(0, 0)}
			l := NewLive(&b)
			l.now = c.now
			tt.run(l, c, &b)
			if got := b.String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
