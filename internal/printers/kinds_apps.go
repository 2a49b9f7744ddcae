package printers

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// controllerRevisionPrinter prints apps/v1 ControllerRevisions as
// kube-apiserver does: CONTROLLER is the controller owner as
// kind.group/name. Upstream declares REVISION a string column but fills it
// with the integer; dnsplane prints what kube-apiserver prints. An owner
// whose apiVersion does not parse fails the request, as upstream's does.
func controllerRevisionPrinter() Printer {
	columns := []metav1.TableColumnDefinition{
		colName(),
		colPlain("Controller", "string", "Controller of the object"),
		colPlain("Revision", "string", appsv1.ControllerRevision{}.SwaggerDoc()["revision"]),
		colAge(),
	}
	return Printer{
		columns: columns,
		cells: func(obj any, now time.Time) ([]any, error) {
			o, ok := obj.(*appsv1.ControllerRevision)
			if !ok || o == nil {
				return nil, fmt.Errorf("cannot print %T as %T", obj, o)
			}
			controller := "<none>"
			if ref := metav1.GetControllerOf(o); ref != nil {
				gv, err := schema.ParseGroupVersion(ref.APIVersion)
				if err != nil {
					return nil, fmt.Errorf("controller of %s: %w", o.Name, err)
				}
				controller = ref.Name
				if gk := gv.WithKind(ref.Kind).GroupKind(); !gk.Empty() {
					controller = strings.ToLower(gk.String()) + "/" + ref.Name
				}
			}
			return []any{o.Name, controller, o.Revision, cellAge(o.CreationTimestamp, now)}, nil
		},
	}
}
