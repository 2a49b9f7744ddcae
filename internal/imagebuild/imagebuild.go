// Package imagebuild builds dnsplane's container images from Go alone:
// one layer holding a static binary, the nonroot user's passwd and group
// entries and a writable /tmp, with every timestamp fixed, so the same
// binary always gives the same image digest (docs/kubernetes.md,
// "Images"). There is no base image and so no shell, package manager or
// libc: the binaries are built with CGO_ENABLED=0 and need none of them.
package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRoot is the user and group the images run as: distroless's
// "nonroot" (65532), which Pod Security's restricted profile accepts
// (runAsNonRoot checks the image's numeric user).
const NonRoot = 65532

// Epoch is every timestamp in an image: the layer's files and the
// config's created time. A fixed time is what makes two builds of the
// same binary byte-identical (reproducible-builds.org's SOURCE_DATE_EPOCH;
// ko uses the same zero default).
var Epoch = time.Unix(0, 0).UTC()

// Spec is one image to build.
type Spec struct {
	// Ref is the image's name and tag, e.g. ghcr.io/dnsplane/dnsplane:v0.1.0.
	Ref string
	// Binary is the host path of the static binary to ship.
	Binary string
	// Entrypoint is where the binary lands in the image, e.g. /dnsplane.
	Entrypoint string
	// Arch is the GOARCH the binary was built for (amd64, arm64).
	Arch string
	// Version goes into the image's org.opencontainers.image.version
	// label.
	Version string
}

// passwd and group name root and nonroot as distroless does, so that
// tools in the pod (kubectl debug's ephemeral containers, ps on the node)
// show a name for 65532, and os/user lookups succeed. HOME is
// /home/nonroot, which the layer holds.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group  = "root:x:0:\nnonroot:x:65532:\n"
)

// Build returns the image of spec.
func Build(spec Spec) (v1.Image, error) {
	if _, err := name.NewTag(spec.Ref, name.StrictValidation); err != nil {
		return nil, fmt.Errorf("image %q: %w", spec.Ref, err)
	}
	bin, err := os.ReadFile(spec.Binary)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", spec.Ref, err)
	}
	layerTar, err := rootfs(spec.Entrypoint, bin)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", spec.Ref, err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image %s: layer: %w", spec.Ref, err)
	}
	created := v1.Time{Time: Epoch}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   created,
			CreatedBy: "dnsplane hack/image: " + spec.Entrypoint + " (static), /etc/passwd, /etc/group, /home/nonroot, /tmp",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", spec.Ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", spec.Ref, err)
	}
	cfg = cfg.DeepCopy()
	cfg.Created = created
	cfg.OS = "linux"
	cfg.Architecture = spec.Arch
	cfg.Author = "dnsplane"
	cfg.Config = v1.Config{
		Entrypoint: []string{spec.Entrypoint},
		User:       strconv.Itoa(NonRoot) + ":" + strconv.Itoa(NonRoot),
		WorkingDir: "/",
		// No PATH: there is nothing to look up. HOME matches passwd for
		// libraries that read it.
		Env: []string{"HOME=/home/nonroot"},
		Labels: map[string]string{
			"org.opencontainers.image.source":  "https://github.com/dnsplane/dnsplane",
			"org.opencontainers.image.version": spec.Version,
			"org.opencontainers.image.title":   filepath.Base(spec.Entrypoint),
		},
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("image %s: config: %w", spec.Ref, err)
	}
	return img, nil
}

// rootfs is the layer's tar: entries in a fixed order, every time Epoch,
// owners numeric.
func rootfs(entrypoint string, bin []byte) ([]byte, error) {
	type entry struct {
		name     string
		mode     int64
		uid      int
		data     []byte
		typeflag byte
	}
	entries := []entry{
		{name: "etc/", mode: 0o755, typeflag: tar.TypeDir},
		{name: "etc/group", mode: 0o644, data: []byte(group), typeflag: tar.TypeReg},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd), typeflag: tar.TypeReg},
		{name: "home/", mode: 0o755, typeflag: tar.TypeDir},
		{name: "home/nonroot/", mode: 0o700, uid: NonRoot, typeflag: tar.TypeDir},
		// Sticky and world-writable like any /tmp: the webhook's default
		// --cert-dir is under it (the chart mounts an emptyDir there so a
		// read-only root filesystem works too).
		{name: "tmp/", mode: 0o1777, typeflag: tar.TypeDir},
		{name: filepath.Clean(entrypoint)[1:], mode: 0o755, data: bin, typeflag: tar.TypeReg},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Typeflag: e.typeflag,
			Name:     e.name,
			Mode:     e.mode,
			Uid:      e.uid,
			Gid:      e.uid,
			Size:     int64(len(e.data)),
			ModTime:  Epoch,
			Format:   tar.FormatPAX,
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteTarball writes img as a docker-compatible image tarball named ref
// (manifest.json + config + layer), the format `docker load`, `kind load
// image-archive` and `ctr images import` all accept.
func WriteTarball(path, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("image %q: %w", ref, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteLayout adds img to the OCI image layout at dir (created when
// missing), with its ref as the org.opencontainers.image.ref.name
// annotation, for tools that take OCI layouts (skopeo, crane, ctr's OCI
// archives after tar).
func WriteLayout(dir, ref string, img v1.Image) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return fmt.Errorf("OCI layout %s: %w", dir, err)
		}
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		return fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	return nil
}

// GoBuild builds pkg (a package path of this module, e.g. ./cmd/dnsplane)
// into out as the images ship it: a static linux binary for arch
// (CGO_ENABLED=0), with -trimpath so no path of the building machine is
// in it, and -buildvcs=false so the checkout's state is not either: the
// same source gives the same bytes anywhere with the same Go.
// moduleDir is the module's root.
func GoBuild(ctx context.Context, moduleDir, pkg, arch, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", cmd, err, b)
	}
	return nil
}

// Version is the tag of the images this tree builds, the release the Helm
// chart and the operator's --dns-image default name.
const Version = "v0.1.0"

// Registry is where dnsplane's images are published.
const Registry = "ghcr.io/dnsplane"

// Image is one of dnsplane's images: which package's binary it ships and
// where.
type Image struct {
	// Name is the repository's last element and the tarball's base name.
	Name string
	// Package is the Go package built into it.
	Package string
	// Entrypoint is the binary's path in the image.
	Entrypoint string
}

// Images are dnsplane's two images: the full binary (control plane,
// operator, webhook) and the data plane (cluster DNS, node cache), which
// the DaemonSets run.
func Images() []Image {
	return []Image{
		{Name: "dnsplane", Package: "./cmd/dnsplane", Entrypoint: "/dnsplane"},
		{Name: "dnsplane-dns", Package: "./cmd/dnsplane-dns", Entrypoint: "/dnsplane-dns"},
	}
}

// Ref is the image's name in registry at version, e.g.
// ghcr.io/dnsplane/dnsplane-dns:v0.1.0.
func (i Image) Ref(registry, version string) string {
	return registry + "/" + i.Name + ":" + version
}

// Summary is what a registry shows of an image.
type Summary struct {
	// Digest is the manifest's digest, the image's identity.
	Digest v1.Hash
	// Compressed is the bytes a pull transfers: manifest, config and
	// compressed layers (the "size" registries list).
	Compressed int64
	// Uncompressed is the layers' unpacked tar bytes.
	Uncompressed int64
}

// Summarize returns img's digest and sizes.
func Summarize(img v1.Image) (Summary, error) {
	var s Summary
	var err error
	if s.Digest, err = img.Digest(); err != nil {
		return s, err
	}
	m, err := img.Manifest()
	if err != nil {
		return s, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return s, err
	}
	s.Compressed = int64(len(raw)) + m.Config.Size
	layers, err := img.Layers()
	if err != nil {
		return s, err
	}
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return s, err
		}
		s.Compressed += n
		rc, err := l.Uncompressed()
		if err != nil {
			return s, err
		}
		u, err := io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return s, err
		}
		s.Uncompressed += u
	}
	return s, nil
}
