package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	kcmv1alpha1 "k8s.io/kube-controller-manager/config/v1alpha1"
	kcmconfig "k8s.io/kubernetes/pkg/controller/apis/config"
	kcmscheme "k8s.io/kubernetes/pkg/controller/apis/config/scheme"
)

// Descriptor is one controller, as kube-controller-manager describes its
// own: its name (kube-controller-manager's, so --controllers takes the
// same names), why dnsplane runs it, and how to build it. A descriptor
// with Disabled set is one kube-controller-manager runs and dnsplane does
// not, with the reason; docs/controllers.md lists both.
//
// New returns the function that runs the controller until its context
// ends, or nil when the configuration leaves it nothing to do (as
// kube-controller-manager skips the CSR signer without a CA).
type Descriptor struct {
	Name     string
	Why      string
	Disabled string
	New      func(ctx context.Context, c *Context) (run func(context.Context), err error)
}

// Descriptors are every controller kube-controller-manager 1.37 runs by
// default, in start order; the ones dnsplane cannot run are Disabled.
func Descriptors() []Descriptor {
	return slices.Concat(lifecycleDescriptors(), workloadDescriptors(), serviceDescriptors(),
		nodeDescriptors(), identityDescriptors(), disabledDescriptors())
}

// Select picks the descriptors --controllers names, with
// kube-controller-manager's syntax: "*" is every enabled one, "name" one,
// "-name" none of that one; the last word about a name wins over "*". A
// Disabled controller cannot be enabled: naming it is an error that says
// why. An empty selection is "*".
func Select(descs []Descriptor, selection []string) ([]Descriptor, error) {
	if len(selection) == 0 {
		selection = []string{"*"}
	}
	byName := make(map[string]Descriptor, len(descs))
	for _, d := range descs {
		byName[d.Name] = d
	}
	all := false
	on, off := map[string]bool{}, map[string]bool{}
	for _, s := range selection {
		s = strings.TrimSpace(s)
		name, negated := strings.CutPrefix(s, "-")
		switch {
		case s == "*":
			all = true
			continue
		case name == "":
			return nil, fmt.Errorf("--controllers: empty controller name in %q", strings.Join(selection, ","))
		}
		d, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("--controllers: %q is not a known controller (docs/controllers.md lists them)", name)
		}
		if negated {
			off[name] = true
			continue
		}
		if d.Disabled != "" {
			return nil, fmt.Errorf("--controllers: %q does not run in dnsplane: %s", name, d.Disabled)
		}
		on[name] = true
	}
	var out []Descriptor
	for _, d := range descs {
		if d.Disabled != "" || off[d.Name] {
			continue
		}
		if all || on[d.Name] {
			out = append(out, d)
		}
	}
	return out, nil
}

// componentConfig is kube-controller-manager's configuration with its
// defaults (upstream's defaulting of the v1alpha1 type, as its
// NewDefaultComponentConfig does) and the options dnsplane takes.
func componentConfig(o Options) (kcmconfig.KubeControllerManagerConfiguration, error) {
	var versioned kcmv1alpha1.KubeControllerManagerConfiguration
	kcmscheme.Scheme.Default(&versioned)
	var cfg kcmconfig.KubeControllerManagerConfiguration
	if err := kcmscheme.Scheme.Convert(&versioned, &cfg, nil); err != nil {
		return cfg, fmt.Errorf("kube-controller-manager's default configuration: %w", err)
	}
	// Not in the type's defaulting but in kube-controller-manager's flags
	// (--node-eviction-rate, --secondary-node-eviction-rate): left at 0,
	// the node lifecycle controller's NoExecute tainter never fires, so an
	// unreachable Node got only its NoSchedule taint (docs/nodes.md).
	if cfg.NodeLifecycleController.NodeEvictionRate == 0 {
		cfg.NodeLifecycleController.NodeEvictionRate = 0.1
	}
	if cfg.NodeLifecycleController.SecondaryNodeEvictionRate == 0 {
		cfg.NodeLifecycleController.SecondaryNodeEvictionRate = 0.01
	}
	if o.NodeMonitorGracePeriod > 0 {
		cfg.NodeLifecycleController.NodeMonitorGracePeriod.Duration = o.NodeMonitorGracePeriod
	}
	cfg.CSRSigningController.ClusterSigningCertFile = o.ClusterSigningCertFile
	cfg.CSRSigningController.ClusterSigningKeyFile = o.ClusterSigningKeyFile
	return cfg, nil
}
