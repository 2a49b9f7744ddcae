// Command image builds dnsplane's container images reproducibly, without
// a container runtime:
//
//	go run ./hack/image -o out/
//
// writes out/dnsplane.tar and out/dnsplane-dns.tar, docker-compatible
// image tarballs of ghcr.io/dnsplane/dnsplane:v0.1.0 and
// ghcr.io/dnsplane/dnsplane-dns:v0.1.0 for linux/amd64, which load with
// `docker load -i`, `kind load image-archive` or `ctr -n k8s.io images
// import` (docs/kubernetes.md, "Images"). -oci DIR also writes both into
// an OCI image layout. Run it from the module's root.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/dnsplane/dnsplane/internal/imagebuild"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	out := fs.String("o", "out", "directory for the image tarballs")
	oci := fs.String("oci", "", "also write the images into this OCI image layout directory")
	arch := fs.String("arch", "amd64", "GOARCH of the images (amd64, arm64)")
	registry := fs.String("registry", imagebuild.Registry, "registry and namespace of the image names")
	version := fs.String("version", imagebuild.Version, "tag of the images")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	bins, err := os.MkdirTemp("", "dnsplane-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bins)
	for _, im := range imagebuild.Images() {
		bin := filepath.Join(bins, im.Name)
		if err := imagebuild.GoBuild(ctx, ".", im.Package, *arch, bin); err != nil {
			return err
		}
		ref := im.Ref(*registry, *version)
		img, err := imagebuild.Build(imagebuild.Spec{Ref: ref, Binary: bin, Entrypoint: im.Entrypoint, Arch: *arch, Version: *version})
		if err != nil {
			return err
		}
		tarPath := filepath.Join(*out, im.Name+".tar")
		if err := imagebuild.WriteTarball(tarPath, ref, img); err != nil {
			return err
		}
		if *oci != "" {
			if err := imagebuild.WriteLayout(*oci, ref, img); err != nil {
				return err
			}
		}
		sum, err := imagebuild.Summarize(img)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %s compressed %s (%d bytes) uncompressed %d bytes -> %s\n", ref, sum.Digest, mb(sum.Compressed), sum.Compressed, sum.Uncompressed, tarPath)
	}
	return nil
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
