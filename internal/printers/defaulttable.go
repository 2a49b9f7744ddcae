package printers

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apirest "k8s.io/apiserver/pkg/registry/rest"
)

// createdAtPrinter prints a kind kube-apiserver prints with its default
// table convertor (k8s.io/apiserver/pkg/registry/rest, for kinds without
// a handler of their own: LimitRange, Role, ClusterRole): Name and Created At, the creation
// time as a date.
func createdAtPrinter(gr schema.GroupResource) Printer {
	convertor := apirest.NewDefaultTableConvertor(gr)
	t, err := convertor.ConvertToTable(context.Background(), &metav1.PartialObjectMetadata{}, nil)
	if err != nil {
		panic(fmt.Sprintf("printers: default table of %s: %v", gr, err))
	}
	return Printer{
		columns: t.ColumnDefinitions,
		cells: func(obj any, _ time.Time) ([]any, error) {
			in, ok := obj.(runtime.Object)
			if !ok {
				return nil, fmt.Errorf("cannot print %T as %s", obj, gr)
			}
			t, err := convertor.ConvertToTable(context.Background(), in, &metav1.TableOptions{NoHeaders: true})
			if err != nil {
				return nil, fmt.Errorf("printing %s: %w", gr, err)
			}
			return t.Rows[0].Cells, nil
		},
	}
}
