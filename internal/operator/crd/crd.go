// Package crd builds the CustomResourceDefinition of the DNS resource, so
// that `dnsplane operator` can run against any Kubernetes cluster, where
// DNS is not a built-in kind. The schema is internal/openapi's, the one
// dnsplane's API server serves, with its references inlined: a CRD's
// structural schema may not contain $ref.
package crd

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/openapi"
)

// objectMetaDef is metav1.ObjectMeta's definition name: a CRD leaves the
// metadata's schema to the API server.
const objectMetaDef = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// DNS returns the DNS CustomResourceDefinition as YAML.
func DNS() ([]byte, error) {
	gvk := schema.GroupVersionKind{Group: "operator.dnsplane.io", Version: "v1", Kind: "DNS"}
	g := openapi.NewGenerator(openapi.V3)
	name, err := g.AddKind(gvk, &operatorv1.DNS{})
	if err != nil {
		return nil, fmt.Errorf("DNS schema: %w", err)
	}
	raw, err := json.Marshal(g.Definitions())
	if err != nil {
		return nil, fmt.Errorf("DNS schema: %w", err)
	}
	var defs map[string]any
	if err := json.Unmarshal(raw, &defs); err != nil {
		return nil, fmt.Errorf("DNS schema: %w", err)
	}
	root, err := inline(defs, name, nil)
	if err != nil {
		return nil, err
	}
	requireListMapKeys(root)
	delete(root, "x-kubernetes-group-version-kind")
	if props, ok := root["properties"].(map[string]any); ok {
		// The API server refuses anything but the type for the root's
		// metadata, a description included.
		props["metadata"] = map[string]any{"type": "object"}
	}
	if err := addValidations(root); err != nil {
		return nil, err
	}
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "dnses.operator.dnsplane.io"},
		"spec": map[string]any{
			"group": gvk.Group,
			"scope": "Cluster",
			"names": map[string]any{"plural": "dnses", "singular": "dns", "kind": "DNS", "listKind": "DNSList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"subresources":             map[string]any{"status": map[string]any{}},
				"schema":                   map[string]any{"openAPIV3Schema": root},
				"additionalPrinterColumns": printerColumns(),
			}},
		},
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, fmt.Errorf("DNS CRD: %w", err)
	}
	return out, nil
}

// printerColumns are the columns `kubectl get dnses` shows on any
// cluster, the ones dnsplane's API server prints (internal/printers'
// DNS printer; TestPrinterColumnsMatchServer), as JSONPaths: a custom
// resource's table is built from them. Name is always first.
func printerColumns() []any {
	col := func(name, typ, path, desc string) map[string]any {
		return map[string]any{"name": name, "type": typ, "jsonPath": path, "description": desc}
	}
	return []any{
		col("Cluster-IP", "string", ".status.clusterIP", "The service IP of cluster DNS."),
		col("Cluster-Domain", "string", ".status.clusterDomain", "The cluster domain cluster DNS serves."),
		col("Available", "string", `.status.conditions[?(@.type=="Available")].status`, "Status of the Available condition."),
		col("Age", "date", ".metadata.creationTimestamp", ""),
	}
}

// inline returns definition name with every reference replaced by the
// definition it names. Path detects recursive types, which a CRD cannot
// describe.
func inline(defs map[string]any, name string, path []string) (map[string]any, error) {
	for _, p := range path {
		if p == name {
			return nil, fmt.Errorf("DNS schema: %s refers to itself (%s)", name, strings.Join(path, " > "))
		}
	}
	if name == objectMetaDef {
		return map[string]any{"type": "object"}, nil
	}
	def, ok := defs[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("DNS schema: no definition %s", name)
	}
	out, err := resolve(defs, def, append(path, name))
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

// resolve copies v, inlining "$ref"s and the single-reference allOf that
// OpenAPI v3 wraps a described reference in.
func resolve(defs map[string]any, v any, path []string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			return inline(defs, strings.TrimPrefix(ref, "#/components/schemas/"), path)
		}
		out := map[string]any{}
		if all, ok := v["allOf"].([]any); ok && len(all) == 1 {
			in, err := resolve(defs, all[0], path)
			if err != nil {
				return nil, err
			}
			for k, x := range in.(map[string]any) {
				out[k] = x
			}
		}
		for k, x := range v {
			if k == "allOf" && len(out) > 0 {
				continue
			}
			if k == "x-kubernetes-patch-merge-key" || k == "x-kubernetes-patch-strategy" {
				// Strategic merge patch does not apply to custom
				// resources, and a CRD's schema has no such fields: a
				// strict apply of the CRD would refuse them.
				continue
			}
			r, err := resolve(defs, x, path)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			r, err := resolve(defs, x, path)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	default:
		return v, nil
	}
}

// requireListMapKeys makes the keys of every list of type map required in
// its items, unless they have a default: kube-apiserver refuses a CRD
// otherwise ("this property is in x-kubernetes-list-map-keys, so it must
// have a default or be a required property"; issue 30). The schemas
// internal/openapi generates for dnsplane's own server list no required
// properties, and status.conditions' metav1.Condition keys by type.
func requireListMapKeys(v any) {
	switch v := v.(type) {
	case map[string]any:
		if keys, ok := v["x-kubernetes-list-map-keys"].([]any); ok {
			if items, ok := v["items"].(map[string]any); ok {
				props, _ := items["properties"].(map[string]any)
				required, _ := items["required"].([]any)
				for _, k := range keys {
					prop, _ := props[k.(string)].(map[string]any)
					if _, defaulted := prop["default"]; defaulted || slices.Contains(required, k) {
						continue
					}
					required = append(required, k)
				}
				if len(required) > 0 {
					items["required"] = required
				}
			}
		}
		for _, x := range v {
			requireListMapKeys(x)
		}
	case []any:
		for _, x := range v {
			requireListMapKeys(x)
		}
	}
}
