package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/server/v3/etcdserver/api/snap"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.uber.org/zap"
)

// DamagedError says that an etcd data dir cannot be started as it is, and why.
//
// etcd itself reacts to damage badly for a single-member cluster that cannot
// be repaired from peers: a missing or emptied write-ahead log makes it wait
// forever for a quorum, and a broken database file makes it panic. CheckDataDir
// finds those cases before etcd starts, so start-up ends with this error
// instead (docs/operations.md, "A damaged data dir").
type DamagedError struct {
	Dir    string // the etcd data dir
	Part   string // what is damaged, e.g. "write-ahead log member/wal"
	Detail string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("etcd data dir %s is damaged: %s: %s; restore it from a backup "+
		"(see docs/operations.md, \"A damaged data dir\") or move it away to start an empty cluster",
		e.Dir, e.Part, e.Detail)
}

// CheckDataDir reads an etcd data dir the way etcd would on start, without
// writing to it, and returns a *DamagedError when etcd could not start on
// it. A missing or empty dir is fine (etcd creates a new member), and so is
// a write-ahead log whose last record is torn: that is what a crash during
// a write leaves, and etcd repairs it by dropping the unacknowledged tail.
//
// It must run before etcd opens the dir, under the dir lock.
func CheckDataDir(dir string) error {
	member := filepath.Join(dir, "member")
	if _, err := os.Stat(member); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("checking etcd data dir: %w", err)
	}
	damaged := func(part, format string, a ...any) error {
		return &DamagedError{Dir: dir, Part: part, Detail: fmt.Sprintf(format, a...)}
	}

	dbPath := filepath.Join(member, "snap", "db")
	applied, hasDB, err := appliedIndex(dbPath)
	if err != nil {
		return damaged("database member/snap/db", "%v", err)
	}

	walDir := filepath.Join(member, "wal")
	if !wal.Exist(walDir) {
		if hasDB && applied > 0 {
			return damaged("write-ahead log member/wal", "it is missing or holds no segment, "+
				"while the database has applied entries up to index %d", applied)
		}
		return nil
	}
	last, err := walLastIndex(member, walDir)
	if err != nil {
		return damaged("write-ahead log member/wal", "%v", err)
	}
	if last < applied {
		return damaged("write-ahead log member/wal", "it ends at index %d, but the database has applied "+
			"entries up to index %d: WAL segments were truncated or removed", last, applied)
	}
	return nil
}

// appliedIndex opens etcd's bbolt database read-only and returns the index
// of the last raft entry applied to it. Only the meta pages and the meta
// bucket are read: see CheckDatabasePages for the rest.
func appliedIndex(path string) (index uint64, exists bool, err error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	// bbolt panics on some kinds of corrupted pages rather than returning an
	// error; here a panic is a verdict on the file, not a bug of ours.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading it failed: %v", r)
		}
	}()
	db, err := openDB(path)
	if err != nil {
		return 0, true, err
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(schema.Meta.Name())
		if b == nil {
			return nil
		}
		if v := b.Get(schema.MetaConsistentIndexKeyName); len(v) == 8 {
			index = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	return index, true, err
}

func openDB(path string) (*bolt.DB, error) {
	return bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
}

// CheckDatabasePages reads every page of the etcd database in dir and
// returns a *DamagedError naming the first inconsistency.
//
// bbolt checks pages in a goroutine of its own and panics there on some
// kinds of damage, which no recover can catch: call this only in a process
// whose death is contained, such as the etcd child process (internal/etcdproc),
// which reports the phase it died in.
func CheckDatabasePages(dir string) error {
	path := filepath.Join(dir, "member", "snap", "db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	db, err := openDB(path)
	if err != nil {
		return &DamagedError{Dir: dir, Part: "database member/snap/db", Detail: err.Error()}
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return &DamagedError{Dir: dir, Part: "database member/snap/db", Detail: "consistency check: " + err.Error()}
		}
		return nil
	})
}

// walLastIndex reads the write-ahead log from the newest snapshot etcd would
// load and returns the index of its last entry.
func walLastIndex(member, walDir string) (last uint64, err error) {
	defer func() {
		// The WAL decoder's Must* helpers panic on records that pass the
		// CRC but do not unmarshal.
		if r := recover(); r != nil {
			err = fmt.Errorf("reading it failed: %v", r)
		}
	}()
	lg := zap.NewNop()
	snaps, err := wal.ValidSnapshotEntries(lg, walDir)
	if err != nil {
		return 0, err
	}
	start := &walpb.Snapshot{}
	s, err := snap.New(lg, filepath.Join(member, "snap")).LoadNewestAvailable(snaps)
	switch {
	case err == nil:
		start = &walpb.Snapshot{Index: s.Metadata.Index, Term: s.Metadata.Term}
	case !errors.Is(err, snap.ErrNoSnapshot):
		return 0, fmt.Errorf("loading the newest snapshot: %w", err)
	}
	w, err := wal.OpenForRead(lg, walDir, start)
	if err != nil {
		return 0, err
	}
	defer w.Close()
	_, _, ents, err := w.ReadAll()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, err
	}
	last = start.GetIndex()
	if n := len(ents); n > 0 && ents[n-1].GetIndex() > last {
		last = ents[n-1].GetIndex()
	}
	return last, nil
}
