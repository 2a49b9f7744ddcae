// Package version says which dnsplane this is and which Kubernetes it
// serves: the k8s.io/kubernetes release linked in (its validation,
// defaulting, controllers and scheduler), as /version, the OpenAPI
// documents and `dnsplane version` report it.
package version

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// kubernetesModule is the module whose release dnsplane serves.
const kubernetesModule = "k8s.io/kubernetes"

// fallbackKubernetes is the release go.mod requires, for a binary built
// without module information (go build -trimpath keeps it; only a binary
// linked by hand lacks it). TestFallbackMatchesGoMod keeps it true.
const fallbackKubernetes = "v1.37.2"

// Base is dnsplane's own release line, which a build from a checkout (no
// module version: `go run ./cmd/dnsplane`, `go build`) reports as
// Base-dev with the commit when Go recorded one.
const Base = "v0.1.0"

// Kubernetes is the release of k8s.io/kubernetes linked into this binary,
// e.g. v1.37.2.
func Kubernetes() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fallbackKubernetes
	}
	for _, d := range info.Deps {
		if d.Path != kubernetesModule {
			continue
		}
		if d.Replace != nil && d.Replace.Version != "" {
			return d.Replace.Version
		}
		return d.Version
	}
	return fallbackKubernetes
}

// Dnsplane is this binary's version: the module version `go install
// ...@version` stamps, else Base-dev, with the commit (and +dirty) that
// go build recorded from the checkout.
func Dnsplane() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Base + "-dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return develVersion(info.Settings)
}

func develVersion(settings []debug.BuildSetting) string {
	rev, dirty := vcs(settings)
	v := Base + "-dev"
	if rev == "" {
		return v
	}
	v += "+" + rev[:min(12, len(rev))]
	if dirty {
		v += ".dirty"
	}
	return v
}

// vcs is the commit and the "modified" flag go build recorded from the
// checkout; "" without them.
func vcs(settings []debug.BuildSetting) (rev string, dirty bool) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty
}

// Info is what the API server reports on /version, as kube-apiserver
// fills apimachinery's version.Info: the Kubernetes release it serves,
// with dnsplane named in the build metadata (as k3s reports
// v1.37.2+k3s1), so that kubectl's skew check and client-go's
// major/minor see the real release. Major and Minor stay empty for a
// release that does not parse, as client-go tolerates.
func Info() apimachineryversion.Info {
	k := Kubernetes()
	rev, tree := commit()
	info := apimachineryversion.Info{
		GitVersion:   strings.SplitN(k, "+", 2)[0] + "+dnsplane",
		GitCommit:    rev,
		GitTreeState: tree,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     runtime.GOOS + "/" + runtime.GOARCH,
	}
	if v, err := version.ParseSemantic(k); err == nil {
		info.Major, info.Minor = strconv.FormatUint(uint64(v.Major()), 10), strconv.FormatUint(uint64(v.Minor()), 10)
	}
	return info
}

// commit is the checkout's commit and tree state Go recorded, as
// kube-apiserver's GitCommit and GitTreeState; "" and "" without them.
func commit() (rev, tree string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", ""
	}
	rev, dirty := vcs(info.Settings)
	switch {
	case rev == "":
		return "", ""
	case dirty:
		return rev, "dirty"
	}
	return rev, "clean"
}
