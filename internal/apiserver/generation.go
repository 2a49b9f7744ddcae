package apiserver

import "github.com/dnsplane/dnsplane/internal/registry/rest"

// initGeneration starts a new object's generation at 1 when its kind keeps
// one (rest.Generational); other kinds have none.
func initGeneration(res *Resource, obj any) {
	g := int64(0)
	if _, ok := res.Strategy.(rest.Generational); ok {
		g = 1
	}
	accessor(obj).SetGeneration(g)
}

// nextGeneration moves the generation of obj, an update of the main
// resource over old, by its kind's rule; obj holds old's generation.
func nextGeneration(res *Resource, obj, old any) {
	if g, ok := res.Strategy.(rest.Generational); ok && g.GenerationChanged(obj, old) {
		accessor(obj).SetGeneration(accessor(old).GetGeneration() + 1)
	}
}
