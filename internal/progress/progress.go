// Package progress renders the start-up steps of `dnsplane up` and
// `dnsplane apiserver` (controlplane.Progress): on a terminal a live
// status whose last line rewrites itself (a spinner on the step under way,
// a check mark and its time once done), otherwise one plain line per step
// for logs and scripts (docs/operations.md, "Start-up").
//
// Both go to one writer, the one the logs go to (stderr), so that the
// banner on stdout stays what scripts read; Writer lets log lines pass
// without tearing the live line.
package progress

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Renderer is a controlplane.Progress that is told how start-up ended.
type Renderer interface {
	Starting(name string)
	Started(name string, took time.Duration)
	// Failed ends the steps under way: start-up failed.
	Failed()
	// Ready says start-up ended well, after total.
	Ready(total time.Duration)
	// Writer wraps w (the log's writer, the same one) so that what is
	// written through it does not mix with the live line.
	Writer(w io.Writer) io.Writer
}

// New is the renderer for out: Live when out is a terminal, else Plain.
func New(out io.Writer, terminal bool) Renderer {
	if terminal {
		return NewLive(out)
	}
	return NewPlain(out)
}

// seconds is how a step's time reads: "0.31s".
func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// Plain writes one line per finished step: "started etcd in 0.31s".
type Plain struct {
	mu sync.Mutex
	w  io.Writer
}

// NewPlain returns a Plain writing to w.
func NewPlain(w io.Writer) *Plain { return &Plain{w: w} }

// Starting implements Renderer: plain output says nothing until done.
func (*Plain) Starting(string) {}

// Started implements Renderer.
func (p *Plain) Started(name string, took time.Duration) {
	p.printf("started %s in %s\n", name, seconds(took))
}

// Failed implements Renderer: the error that follows says what failed.
func (*Plain) Failed() {}

// Ready implements Renderer.
func (p *Plain) Ready(total time.Duration) { p.printf("ready in %s\n", seconds(total)) }

// Writer implements Renderer: plain lines need no care.
func (*Plain) Writer(w io.Writer) io.Writer { return w }

func (p *Plain) printf(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, a...)
}

// Terminal control: carriage return and "erase in line" (ECMA-48 EL 2),
// which every terminal kubectl and kind write to understands.
const clearLine = "\r\x1b[2K"

// spinner frames (braille, as kind's and k3d's status lines).
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Live keeps the step under way on the last line, with a spinner and its
// running time, and leaves a "✓ NAME  0.31s" line behind for each step
// done. Steps come one after the other (controlplane.Start), but a step
// may start before the previous one ended; all those under way share the
// line.
type Live struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() time.Time
	frame   int
	pending []pendingStep
	// drawn says the live line is on screen (to be erased before anything
	// else is written).
	drawn bool
}

type pendingStep struct {
	name  string
	since time.Time
}

// NewLive returns a Live writing to w.
func NewLive(w io.Writer) *Live { return &Live{w: w, now: time.Now} }

// Run animates the spinner every interval until ctx ends.
func (l *Live) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.Tick()
		}
	}
}

// Tick advances the spinner and redraws the live line.
func (l *Live) Tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) == 0 {
		return
	}
	l.frame = (l.frame + 1) % len(spinner)
	l.draw()
}

// Starting implements Renderer.
func (l *Live) Starting(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, pendingStep{name: name, since: l.now()})
	l.draw()
}

// Started implements Renderer.
func (l *Live) Started(name string, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, p := range l.pending {
		if p.name == name {
			l.pending = append(l.pending[:i], l.pending[i+1:]...)
			break
		}
	}
	l.erase()
	fmt.Fprintf(l.w, "✓ %s  %s\n", name, seconds(took))
	l.draw()
}

// Failed implements Renderer: each step under way gets a cross.
func (l *Live) Failed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.erase()
	for _, p := range l.pending {
		fmt.Fprintf(l.w, "✗ %s  failed after %s\n", p.name, seconds(l.now().Sub(p.since)))
	}
	l.pending = nil
}

// Ready implements Renderer.
func (l *Live) Ready(total time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.erase()
	l.pending = nil
	fmt.Fprintf(l.w, "ready in %s\n", seconds(total))
}

// Writer implements Renderer: each write erases the live line first and
// draws it again after.
func (l *Live) Writer(w io.Writer) io.Writer { return &liveWriter{l: l, w: w} }

type liveWriter struct {
	l *Live
	w io.Writer
}

func (lw *liveWriter) Write(b []byte) (int, error) {
	lw.l.mu.Lock()
	defer lw.l.mu.Unlock()
	lw.l.erase()
	n, err := lw.w.Write(b)
	lw.l.draw()
	return n, err
}

// draw writes the live line: "⠋ etcd 1.2s" (each step under way).
func (l *Live) draw() {
	if len(l.pending) == 0 {
		return
	}
	now := l.now()
	parts := make([]string, len(l.pending))
	for i, p := range l.pending {
		parts[i] = p.name + " " + seconds(now.Sub(p.since))
	}
	fmt.Fprintf(l.w, "%s%s %s", clearLine, spinner[l.frame], strings.Join(parts, ", "))
	l.drawn = true
}

func (l *Live) erase() {
	if l.drawn {
		fmt.Fprint(l.w, clearLine)
		l.drawn = false
	}
}
