package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// fakeImage builds an image of a small file standing in for a binary.
func fakeImage(t *testing.T, content string) v1.Image {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(bin, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := Build(Spec{Ref: "ghcr.io/dnsplane/test:v0.1.0", Binary: bin, Entrypoint: "/test", Arch: "amd64", Version: "v0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// layerEntries lists the single layer's tar headers.
func layerEntries(t *testing.T, img v1.Image) []*tar.Header {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var hs []*tar.Header
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return hs
		}
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
}

func TestBuildIsReproducible(t *testing.T) {
	t.Parallel()
	a, b := fakeImage(t, "binary"), fakeImage(t, "binary")
	if da, db := digest(t, a), digest(t, b); da != db {
		t.Errorf("two builds of the same binary: %s and %s", da, db)
	}
	if da, dc := digest(t, a), digest(t, fakeImage(t, "other")); da == dc {
		t.Errorf("builds of different binaries share digest %s", da)
	}
	// The tarball users load is the same bytes too.
	var bufs [2]bytes.Buffer
	for i, img := range []v1.Image{a, b} {
		p := filepath.Join(t.TempDir(), "img.tar")
		if err := WriteTarball(p, "ghcr.io/dnsplane/test:v0.1.0", img); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bufs[i].Write(data)
	}
	if !bytes.Equal(bufs[0].Bytes(), bufs[1].Bytes()) {
		t.Error("two tarballs of the same image differ")
	}
}

func TestBuildContent(t *testing.T) {
	t.Parallel()
	img := fakeImage(t, "binary")
	type file struct {
		name string
		mode fs.FileMode
		uid  int
	}
	var got []file
	for _, h := range layerEntries(t, img) {
		if !h.ModTime.Equal(Epoch) {
			t.Errorf("%s: mtime %s, want %s", h.Name, h.ModTime, Epoch)
		}
		if h.Uid != h.Gid {
			t.Errorf("%s: uid %d gid %d", h.Name, h.Uid, h.Gid)
		}
		got = append(got, file{h.Name, h.FileInfo().Mode(), h.Uid})
	}
	want := []file{
		{"etc/", fs.ModeDir | 0o755, 0},
		{"etc/group", 0o644, 0},
		{"etc/passwd", 0o644, 0},
		{"home/", fs.ModeDir | 0o755, 0},
		{"home/nonroot/", fs.ModeDir | 0o700, NonRoot},
		{"tmp/", fs.ModeDir | fs.ModeSticky | 0o777, 0},
		{"test", 0o755, 0},
	}
	if !slices.Equal(got, want) {
		t.Errorf("layer:\n%v\nwant:\n%v", got, want)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	if !slices.Equal(c.Entrypoint, []string{"/test"}) || c.User != "65532:65532" || len(c.Cmd) != 0 || !cfg.Created.Equal(Epoch) || cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("config: %+v", cfg)
	}
	if len(cfg.History) != 1 || !cfg.History[0].Created.Equal(Epoch) {
		t.Errorf("history: %+v", cfg.History)
	}
}

func TestBuildRefusesBadRef(t *testing.T) {
	t.Parallel()
	if _, err := Build(Spec{Ref: "Not A Ref", Binary: "/dev/null", Entrypoint: "/x"}); err == nil {
		t.Error("Build accepted an invalid image reference")
	}
}

// builtImages builds dnsplane's images from this tree, as hack/image does,
// twice into different directories, once per test binary.
var builtImages = sync.OnceValues(func() (map[string][2]v1.Image, error) {
	out := map[string][2]v1.Image{}
	dir, err := os.MkdirTemp("", "dnsplane-imagebuild-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for _, im := range Images() {
		var pair [2]v1.Image
		for i := range pair {
			bin := filepath.Join(dir, string(rune('a'+i)), im.Name)
			if err := GoBuild(context.Background(), "../..", im.Package, "amd64", bin); err != nil {
				return nil, err
			}
			if err := checkStatic(bin); err != nil {
				return nil, err
			}
			// The image is read from the layer now, before the binary
			// is removed.
			img, err := Build(Spec{Ref: im.Ref(Registry, Version), Binary: bin, Entrypoint: im.Entrypoint, Arch: "amd64", Version: Version})
			if err != nil {
				return nil, err
			}
			pair[i] = img
		}
		out[im.Name] = pair
	}
	return out, nil
})

// checkStatic fails for a binary that needs a dynamic loader or a shared
// library, which the empty image does not have.
func checkStatic(bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New(bin + " names a dynamic loader (PT_INTERP)")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return errors.New(bin + " needs shared libraries " + strings.Join(libs, ", "))
	}
	return nil
}

// TestImagesRunInEmptyRoot builds both images twice (same digest), then
// unpacks each layer into an empty directory and runs the binary's version
// command in it, chrooted, as the image's user 65532: the binary needs
// nothing the layer does not hold. And the layer holds no shell.
func TestImagesRunInEmptyRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries")
	}
	if os.Geteuid() != 0 {
		t.Skip("chroot and setuid need root")
	}
	t.Parallel()
	images, err := builtImages()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, entrypoint, wantVersion string
	}{
		{"dnsplane", "/dnsplane", "dnsplane v0.1.0"},
		{"dnsplane-dns", "/dnsplane-dns", "dnsplane-dns v0.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pair := images[tt.name]
			if a, b := digest(t, pair[0]), digest(t, pair[1]); a != b {
				t.Errorf("two builds of %s: %s and %s", tt.name, a, b)
			}
			s, err := Summarize(pair[0])
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s, %d bytes compressed, %d unpacked", tt.name, s.Digest, s.Compressed, s.Uncompressed)

			root := t.TempDir()
			extract(t, pair[0], root)
			if err := os.Chmod(root, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, sh := range []string{"bin/sh", "bin", "usr", "sbin"} {
				if _, err := os.Lstat(filepath.Join(root, sh)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("/%s in the image: %v", sh, err)
				}
			}
			out, err := runIn(t, root, tt.entrypoint, "version")
			if err != nil || !strings.HasPrefix(out, tt.wantVersion) {
				t.Errorf("%s version in an empty root as %d: %v\n%s", tt.entrypoint, NonRoot, err, out)
			}
			if out, err := runIn(t, root, "/bin/sh", "-c", "true"); err == nil {
				t.Errorf("/bin/sh ran in the image: %s", out)
			}
			if tt.name == "dnsplane-dns" {
				servesInEmptyRoot(t, root, tt.entrypoint)
			}
		})
	}
}

// servesInEmptyRoot runs `dns --conf` of the data-plane image in root as
// NonRoot, the cluster DNS pods' command, and queries it: serving needs
// nothing the layer does not hold either (no /etc/hosts, resolv.conf or
// nsswitch.conf: kubelet mounts those into a pod).
func servesInEmptyRoot(t *testing.T, root, entrypoint string) {
	t.Helper()
	// The server binds UDP and TCP: a random loopback address with a port
	// free there for both shares nothing with parallel tests on 127.0.0.1.
	// Should another process still take it first, dns exits refusing it
	// and the next try picks another address.
	const tries = 3
	for try := 1; ; try++ {
		addr := testkit.FreeUDPTCPAddr(t)
		err := serveAndQuery(t, root, entrypoint, addr)
		if err == nil {
			return
		}
		if errors.Is(err, errAddrTaken) && try < tries {
			t.Logf("try %d: %v", try, err)
			continue
		}
		t.Errorf("%s dns in an empty root as %d: %v", entrypoint, NonRoot, err)
		return
	}
}

// errAddrTaken is dns refusing an address another process took between
// the test's pick and its bind.
var errAddrTaken = errors.New("the address was taken before dns bound it")

// serveAndQuery starts dns in root serving a chaos zone on addr and
// queries it until it answers or exits.
func serveAndQuery(t *testing.T, root, entrypoint, addr string) error {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	corefile := fmt.Sprintf(".:%s {\n    bind %s\n    errors\n    chaos dnsplane-image\n}\n", port, host)
	if err := os.WriteFile(filepath.Join(root, "tmp", "Corefile"), []byte(corefile), 0o644); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := exec.CommandContext(ctx, entrypoint, "dns", "--conf", "/tmp/Corefile")
	cmd.Dir = "/"
	cmd.Env = []string{"HOME=/home/nonroot"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: NonRoot, Gid: NonRoot}}
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	// exited is closed once the server has exited, with its status in
	// waitErr.
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() { cancel(); <-exited }()
	m := new(dns.Msg)
	m.SetQuestion("version.bind.", dns.TypeTXT)
	m.Question[0].Qclass = dns.ClassCHAOS
	c := &dns.Client{Timeout: time.Second}
	var resp *dns.Msg
	var exitErr error
	err = testkit.Until(ctx, 100*time.Millisecond, 30*time.Second, func(context.Context) (bool, error) {
		select {
		case <-exited:
			exitErr = waitErr
			return true, nil
		default:
		}
		r, _, err := c.Exchange(m, addr)
		if err != nil {
			return false, err
		}
		resp = r
		return true, nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("no answer at %s: %w\n%s", addr, err, stderr.String())
	case resp == nil && strings.Contains(stderr.String(), "already served by another process"):
		return fmt.Errorf("%w: %w\n%s", errAddrTaken, exitErr, stderr.String())
	case resp == nil:
		return fmt.Errorf("exited before answering at %s: %w\n%s", addr, exitErr, stderr.String())
	case len(resp.Answer) != 1 || !strings.Contains(resp.Answer[0].String(), "dnsplane-image"):
		return fmt.Errorf("answer at %s: %v\n%s", addr, resp, stderr.String())
	}
	return nil
}

// runIn runs argv in root, chrooted, as NonRoot, with the image's
// environment.
func runIn(t *testing.T, root string, argv ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
	cmd.Dir = "/"
	cmd.Env = []string{"HOME=/home/nonroot"}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     root,
		Credential: &syscall.Credential{Uid: NonRoot, Gid: NonRoot},
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// extract unpacks img's layers into root with their modes and owners, as
// a container runtime does.
func extract(t *testing.T, img v1.Image, root string) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		r, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			name := path.Clean(h.Name)
			if !fs.ValidPath(name) {
				t.Fatalf("layer entry %q leaves the root", h.Name)
			}
			p := filepath.Join(root, name)
			switch h.Typeflag {
			case tar.TypeDir:
				if err := os.Mkdir(p, 0o700); err != nil {
					t.Fatal(err)
				}
			case tar.TypeReg:
				f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.Copy(f, tr); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("layer entry %s of type %c: the images hold only files and directories", h.Name, h.Typeflag)
			}
			if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, h.FileInfo().Mode()); err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
	}
}

// TestWriteLayoutReplaces: writing an image of a ref already in the
// layout replaces it, so hack/image can be rerun into the same directory.
func TestWriteLayoutReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, content := range []string{"one", "two"} {
		if err := WriteLayout(dir, "ghcr.io/dnsplane/test:v0.1.0", fakeImage(t, content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteLayout(dir, "ghcr.io/dnsplane/other:v0.1.0", fakeImage(t, "three")); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, d := range m.Manifests {
		refs = append(refs, d.Annotations["org.opencontainers.image.ref.name"])
		if d.Annotations["org.opencontainers.image.ref.name"] == "ghcr.io/dnsplane/test:v0.1.0" && d.Digest != digest(t, fakeImage(t, "two")) {
			t.Errorf("test:v0.1.0 is %s, not the second image", d.Digest)
		}
	}
	if want := []string{"ghcr.io/dnsplane/test:v0.1.0", "ghcr.io/dnsplane/other:v0.1.0"}; !slices.Equal(refs, want) {
		t.Errorf("layout holds %v, want %v", refs, want)
	}
}
