package offlinevalidate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxFileSize bounds one input. Each object inside is further bounded by the
// API server's per-request limit (strictdecode.MaxDocumentSize).
const MaxFileSize = 64 << 20

// Source is one input: a file, or standard input when Name is "-".
type Source struct {
	Name string
	open func() (io.ReadCloser, error)
}

// ErrUsage marks errors in what the user asked for (a path that does not
// exist, an empty argument), as opposed to problems in the manifests.
var ErrUsage = errors.New("usage error")

// manifestExts are the file names kubectl -f picks up from a directory.
var manifestExts = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// Sources expands paths as kubectl -f does: a file is used whatever its
// name, a directory contributes its .yaml/.yml/.json files (recursively when
// recursive is set), and "-" is standard input.
func Sources(paths []string, recursive bool, stdin io.Reader) ([]Source, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no input: pass -f FILE, -f DIR or -f -", ErrUsage)
	}
	var out []Source
	for _, p := range paths {
		if p == "-" {
			out = append(out, Source{Name: "-", open: func() (io.ReadCloser, error) { return io.NopCloser(stdin), nil }})
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%w: the path %q does not exist", ErrUsage, p)
		}
		if !info.IsDir() {
			out = append(out, fileSource(p))
			continue
		}
		found, err := dirSources(p, recursive)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

func fileSource(path string) Source {
	return Source{Name: path, open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

func dirSources(dir string, recursive bool) ([]Source, error) {
	var out []Source
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if d.IsDir() {
			if path != dir && !recursive {
				return fs.SkipDir
			}
			return nil
		}
		if manifestExts[strings.ToLower(filepath.Ext(path))] {
			out = append(out, fileSource(path))
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// read returns the whole source, refusing inputs over MaxFileSize without
// reading them into memory first.
func (s Source) read() ([]byte, error) {
	rc, err := s.open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("input is larger than %d MiB", MaxFileSize>>20)
	}
	return data, nil
}
