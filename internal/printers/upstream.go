package printers

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	kubeprinters "k8s.io/kubernetes/pkg/printers"
	"k8s.io/kubernetes/pkg/printers/internalversion"

	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// upstreamTables holds kube-apiserver's own table handlers
// (k8s.io/kubernetes/pkg/printers/internalversion), which print the
// internal types. It is read-only after package initialisation.
var upstreamTables = kubeprinters.NewTableGenerator().With(internalversion.AddHandlers)

// upstreamPrinter prints a kind served with its k8s.io/api type by
// converting each object to upstream's internal type and calling the
// handler kube-apiserver's table convertor calls (with -o wide columns, as
// kube-apiserver fills them): the columns and cells are upstream's own,
// not a copy. Only the Age column is computed here, from now, so that a
// Table has one clock (upstream's handlers read time.Now). It panics when
// upstream has no handler for the kind: a programming error caught by
// TestEveryResourceHasPrinter at package initialisation.
func upstreamPrinter(gk schema.GroupKind) Printer {
	newInternal := func() runtime.Object {
		obj, err := legacyscheme.Scheme.New(gk.WithVersion(runtime.APIVersionInternal))
		if err != nil {
			panic(fmt.Sprintf("printers: no internal type for %s: %v", gk, err))
		}
		return obj
	}
	t, err := upstreamTables.GenerateTable(newInternal(), kubeprinters.GenerateOptions{Wide: true})
	if err != nil {
		panic(fmt.Sprintf("printers: no upstream table handler for %s: %v", gk, err))
	}
	columns := t.ColumnDefinitions
	age := -1
	for i, c := range columns {
		if c.Name == "Age" {
			age = i
		}
	}
	return Printer{
		columns: columns,
		cells: func(obj any, now time.Time) ([]any, error) {
			in, ok := obj.(runtime.Object)
			if !ok {
				return nil, fmt.Errorf("cannot print %T as %s", obj, gk)
			}
			internal := newInternal()
			if err := upstream.Convert(in, internal); err != nil {
				return nil, err
			}
			t, err := upstreamTables.GenerateTable(internal, kubeprinters.GenerateOptions{Wide: true, NoHeaders: true})
			if err != nil {
				return nil, fmt.Errorf("printing %s: %w", gk, err)
			}
			if len(t.Rows) != 1 {
				return nil, fmt.Errorf("printing %s: %d rows for one object", gk, len(t.Rows))
			}
			cells := t.Rows[0].Cells
			for i, c := range cells {
				cells[i] = jsonCell(c)
			}
			if age >= 0 && age < len(cells) {
				if om := objectMeta(obj); om != nil {
					cells[age] = cellAge(om.CreationTimestamp, now)
				}
			}
			return cells, nil
		},
	}
}

// jsonCell gives integer cells the type the other printers use: they are
// numbers in JSON either way.
func jsonCell(c any) any {
	switch v := c.(type) {
	case int:
		return int64(v)
	case int32:
		return int64(v)
	}
	return c
}
