package datadirlock

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestAcquireHeld(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, Name))
	if err != nil || string(data) != strconv.Itoa(os.Getpid())+"\n" {
		t.Fatalf("lock file holds %q, %v; want our pid", data, err)
	}
	// flock conflicts between open file descriptions, so a second Acquire
	// in this process is refused as another process's would be.
	_, err = Acquire(dir)
	held, ok := errors.AsType[*HeldError](err)
	if !ok {
		t.Fatalf("second Acquire: %v, want a *HeldError", err)
	}
	self, _ := os.Executable()
	want := "data dir " + dir + " is in use by " + filepath.Base(self)
	if held.PID != os.Getpid() || !strings.HasPrefix(err.Error(), want) ||
		!strings.HasSuffix(err.Error(), "(pid "+strconv.Itoa(os.Getpid())+"); stop it or choose another --data-dir") {
		t.Errorf("second Acquire: %q (pid %d); want %q… (pid %d); stop it or choose another --data-dir", err, held.PID, want, os.Getpid())
	}
	// A file left behind (an `up` that was killed) is taken over; a
	// refused start does not remove what it found.
	if err := os.WriteFile(filepath.Join(dir, "other"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.f.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder died: %v", err)
	}
	if err := l2.Release(false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, Name)); err != nil {
		t.Errorf("Release(false) of a lock file it found: %v", err)
	}
	l3, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l3.Release(true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, Name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Release(true): %v, want the file removed", err)
	}
}

// TestReleaseRemovesWhatItCreated: a refused start leaves the dir as it
// was.
func TestReleaseRemovesWhatItCreated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(false); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dir holds %v after Release(false)", entries)
	}
}

func TestHeldErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    HeldError
		want string
	}{
		{HeldError{Dir: "/d", PID: 42, Holder: "dnsplane up"}, "data dir /d is in use by dnsplane up (pid 42); stop it or choose another --data-dir"},
		{HeldError{Dir: "/d", PID: 42}, "data dir /d is in use by another process (pid 42); stop it or choose another --data-dir"},
		{HeldError{Dir: "/d"}, "data dir /d is in use by another process; stop it or choose another --data-dir"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestParsePID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"42\n": 42, "42": 42, " 7 \n": 7, "": 0, "-1": 0, "0": 0, "+3": 0, "03": 0, "x": 0, "1 2": 0} {
		got, err := ParsePID([]byte(in))
		if got != want || (err == nil) != (want > 0) {
			t.Errorf("ParsePID(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func FuzzParsePID(f *testing.F) {
	for _, s := range []string{"42\n", "", "x", "99999999999999999999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pid, err := ParsePID(data)
		if err == nil && (pid <= 0 || strconv.Itoa(pid) != strings.TrimSpace(string(data))) {
			t.Errorf("ParsePID(%q) = %d", data, pid)
		}
	})
}

func TestMakePrivate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode, was os.FileMode
	}{
		{0o755, 0o755},
		{0o750, 0o750},
		{0o711, 0o711},
		{0o700, 0},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, tt.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, tt.mode); err != nil { // past the umask
			t.Fatal(err)
		}
		was, err := MakePrivate(dir)
		if err != nil || was != tt.was {
			t.Errorf("MakePrivate of a %#o dir: %#o, %v; want %#o", tt.mode, was, err, tt.was)
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("a %#o dir is %v after MakePrivate (%v); want 0700", tt.mode, fi.Mode().Perm(), err)
		}
	}
}

// TestMakePrivateRefusesOthersDir: a dir of another user (here root's /,
// when the tests do not run as root) is refused, naming it, unchanged.
func TestMakePrivateRefusesOthersDir(t *testing.T) {
	t.Parallel()
	if os.Getuid() == 0 {
		t.Skip("root owns /")
	}
	before, err := os.Stat("/")
	if err != nil {
		t.Fatal(err)
	}
	_, err = MakePrivate("/")
	nf, ok := errors.AsType[*NotOwnedError](err)
	if !ok || nf.UID != 0 || !strings.Contains(err.Error(), "data dir / is owned by uid 0, not by uid "+strconv.Itoa(os.Getuid())) {
		t.Fatalf("MakePrivate(/): %v; want a NotOwnedError naming uid 0", err)
	}
	if after, err := os.Stat("/"); err != nil || after.Mode() != before.Mode() {
		t.Errorf("/ changed mode: %v → %v", before.Mode(), after.Mode())
	}
}

func TestHolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if h, err := Holder(dir); h != nil || err != nil {
		t.Fatalf("Holder with no lock file: %v, %v; want not held", h, err)
	}
	if _, err := os.Stat(filepath.Join(dir, Name)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Holder created the lock file: %v", err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := Holder(dir); h == nil || h.PID != os.Getpid() || err != nil {
		t.Fatalf("Holder while held: %v, %v; want our pid", h, err)
	}
	// Holder leaves the lock as it was: the holder can release it and
	// another take it.
	if err := l.Release(false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, Name), []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if h, err := Holder(dir); h != nil || err != nil {
		t.Fatalf("Holder of a file no one locks: %v, %v; want not held", h, err)
	}
	l, err = Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Holder: %v", err)
	}
	_ = l.Release(true)
}
