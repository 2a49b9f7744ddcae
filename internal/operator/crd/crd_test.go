package crd

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestDNS(t *testing.T) {
	out, err := DNS()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "$ref") {
		t.Fatalf("a CRD schema may not contain $ref:\n%s", out)
	}
	var crd struct {
		Spec struct {
			Scope    string
			Versions []struct {
				Name   string
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]struct {
							Type       string
							Properties map[string]any
						}
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(out, &crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Scope != "Cluster" || len(crd.Spec.Versions) != 1 {
		t.Fatalf("CRD spec: %+v", crd.Spec)
	}
	props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
	for _, p := range []string{"spec", "status", "metadata"} {
		if props[p].Type != "object" {
			t.Errorf("%s: type %q, want object", p, props[p].Type)
		}
	}
	for _, p := range []string{"pluginConfig", "upstreamResolvers", "cache", "logLevel", "managementState"} {
		if _, ok := props["spec"].Properties[p]; !ok {
			t.Errorf("spec.%s missing", p)
		}
	}
}
