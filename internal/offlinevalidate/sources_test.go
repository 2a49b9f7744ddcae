package offlinevalidate

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSources(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.yaml", "a.json", "c.YML", "notes.txt", "sub/d.yaml"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func(srcs []Source) string {
		var out []string
		for _, s := range srcs {
			out = append(out, strings.TrimPrefix(s.Name, dir+"/"))
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name      string
		paths     []string
		recursive bool
		want      string
		wantUsage bool
	}{
		{name: "directory", paths: []string{dir}, want: "a.json,b.yaml,c.YML"},
		{name: "recursive", paths: []string{dir}, recursive: true, want: "a.json,b.yaml,c.YML,sub/d.yaml"},
		{name: "file of any name", paths: []string{filepath.Join(dir, "notes.txt")}, want: "notes.txt"},
		{name: "stdin", paths: []string{"-"}, want: "-"},
		{name: "missing", paths: []string{filepath.Join(dir, "nope")}, wantUsage: true},
		{name: "none", wantUsage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs, err := Sources(tt.paths, tt.recursive, strings.NewReader(""))
			if tt.wantUsage {
				if !errors.Is(err, ErrUsage) {
					t.Fatalf("err = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(srcs); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestReadRefusesOversizedInput(t *testing.T) {
	src := Source{Name: "big", open: func() (io.ReadCloser, error) {
		return io.NopCloser(io.LimitReader(zeros{}, MaxFileSize+10)), nil
	}}
	if _, err := src.read(); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Fatalf("err = %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}
