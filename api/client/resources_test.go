package client_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/api/client/clientset/versioned/fake"
	"github.com/dnsplane/dnsplane/api/client/informers/externalversions"
)

// The generators pluralize kinds themselves; a plural that differs from
// api.Resources' (DNS → dnses needs hack/update-codegen.sh's
// --plural-exceptions) would make the clients ask for a resource the server
// does not serve. The informer factory knows every generated resource by
// group, version and plural.
func TestGeneratedResourcesAreServed(t *testing.T) {
	factory := externalversions.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	n := 0
	for _, r := range api.Resources() {
		if !strings.HasPrefix(reflect.TypeOf(r.New()).Elem().PkgPath(), "github.com/dnsplane/dnsplane/api/") {
			continue // upstream's type: client-go's clientset serves it
		}
		n++
		if _, err := factory.ForResource(r.GroupVersionResource()); err != nil {
			t.Errorf("%v: %v", r.GroupVersionResource(), err)
		}
	}
	if n == 0 {
		t.Fatal("api.Resources has no dnsplane kind")
	}
}
