// Package printers renders objects as the meta.k8s.io Table kube-apiserver
// returns to kubectl get (Accept: application/json;as=Table;v=v1;g=meta.k8s.io):
// per kind, the columns kube-apiserver's printers define
// (k8s.io/kubernetes pkg/printers/internalversion) and the cells of an
// object's row. Every kind of api.Resources has its own printer;
// TestEveryResourceHasPrinter keeps it so.
package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Values of the includeObject query parameter of Table requests.
const (
	includeObjectNone     = string(metav1.IncludeNone)
	includeObjectMetadata = string(metav1.IncludeMetadata)
	includeObjectObject   = string(metav1.IncludeObject)
)

// Table builds the meta.k8s.io/v1 Table kube-apiserver returns for objects
// of one resource. objs are pointers to the Go type res.New returns.
// includeObject is the ?includeObject= value: "" or "Metadata" puts a
// PartialObjectMetadata in each row (kube's default), "Object" the whole
// object, "None" nothing; anything else is a 400. listMeta carries the
// resourceVersion and continue token of a list. now is the clock the AGE
// columns count from. Errors are *apierrors.StatusError, ready to send.
//
// The Table is always meta.k8s.io/v1; a v1beta1 response differs only in
// the top-level apiVersion, which the caller may set.
//
// As kube-apiserver does, every cell is filled, including the priority 1
// (-o wide) columns; kubectl hides those itself.
func Table(res api.Resource, objs []any, includeObject string, listMeta metav1.ListMeta, now time.Time) (*metav1.Table, error) {
	switch includeObject {
	case "", includeObjectMetadata, includeObjectObject, includeObjectNone:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", includeObject))
	}
	p := printerFor(res.GVK.GroupKind())
	t := &metav1.Table{
		TypeMeta:          metav1.TypeMeta{Kind: "Table", APIVersion: metav1.SchemeGroupVersion.String()},
		ListMeta:          listMeta,
		ColumnDefinitions: p.Columns(),
		Rows:              make([]metav1.TableRow, 0, len(objs)),
	}
	for _, obj := range objs {
		printed, err := asPrintedVersion(res, obj)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("printing %s: %w", res.GroupResource(), err))
		}
		row, err := p.Row(printed, now)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("printing %s: %w", res.GroupResource(), err))
		}
		if row.Object, err = rowObject(res.GVK, obj, includeObject); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// asPrintedVersion returns obj in the version its kind's printer prints:
// a row that is another version of the kind it is stored as (autoscaling/v1
// HorizontalPodAutoscalers, stored as v2) is converted to the stored
// version, as kube-apiserver converts every version to the internal type
// its printers take.
func asPrintedVersion(res api.Resource, obj any) (any, error) {
	stored := res.StoredAs()
	if stored == res.GVK || stored.GroupKind() != res.GVK.GroupKind() {
		return obj, nil
	}
	in, ok := obj.(runtime.Object)
	out, ok2 := api.New(stored)
	o, ok3 := out.(runtime.Object)
	if !ok || !ok2 || !ok3 {
		return nil, fmt.Errorf("cannot convert %T to %s", obj, stored)
	}
	if err := upstream.ConvertVersion(in, o, stored.GroupKind()); err != nil {
		return nil, err
	}
	return o, nil
}

// rowObject renders row.object for the includeObject mode.
func rowObject(gvk schema.GroupVersionKind, obj any, includeObject string) (runtime.RawExtension, error) {
	switch includeObject {
	case includeObjectNone:
		return runtime.RawExtension{}, nil
	case includeObjectObject:
		raw, err := json.Marshal(obj)
		if err != nil {
			return runtime.RawExtension{}, err
		}
		return runtime.RawExtension{Raw: withTypeMeta(raw, gvk)}, nil
	default:
		om := objectMeta(obj)
		if om == nil {
			return runtime.RawExtension{}, fmt.Errorf("%T has no metadata", obj)
		}
		partial := metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: metav1.SchemeGroupVersion.String()},
			ObjectMeta: *om,
		}
		raw, err := json.Marshal(&partial)
		return runtime.RawExtension{Raw: raw}, err
	}
}

// withTypeMeta adds kind and apiVersion to an encoded object that lacks
// them, without decoding it (and so without reordering its fields).
func withTypeMeta(raw []byte, gvk schema.GroupVersionKind) []byte {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil || (tm.Kind != "" && tm.APIVersion != "") {
		return raw
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) < 2 || trimmed[0] != '{' {
		return raw
	}
	var b bytes.Buffer
	b.WriteByte('{')
	sep := func() {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
	}
	if tm.Kind == "" {
		k, _ := json.Marshal(gvk.Kind)
		b.WriteString(`"kind":`)
		b.Write(k)
	}
	if tm.APIVersion == "" {
		v, _ := json.Marshal(gvk.GroupVersion().String())
		sep()
		b.WriteString(`"apiVersion":`)
		b.Write(v)
	}
	rest := bytes.TrimSpace(trimmed[1:])
	if len(rest) > 0 && rest[0] != '}' {
		b.WriteByte(',')
	}
	b.Write(rest)
	return b.Bytes()
}

// objectMeta returns the ObjectMeta every served type embeds.
func objectMeta(obj any) *metav1.ObjectMeta {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if om, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			return om
		}
	}
	return nil
}

// Printer prints one kind: its column definitions and, for an object, the
// cells of its row in column order.
type Printer struct {
	columns    []metav1.TableColumnDefinition
	cells      func(obj any, now time.Time) ([]any, error)
	conditions func(obj any) []metav1.TableRowCondition
}

// Columns returns the column definitions, the -o wide ones (priority 1)
// included.
func (p Printer) Columns() []metav1.TableColumnDefinition { return slices.Clone(p.columns) }

// Row prints obj, a pointer to the kind's Go type: its cells and, for
// kinds that have them, its conditions. now is the clock the AGE columns
// count from. A value of another type is an error.
func (p Printer) Row(obj any, now time.Time) (metav1.TableRow, error) {
	cells, err := p.cells(obj, now)
	if err != nil {
		return metav1.TableRow{}, err
	}
	row := metav1.TableRow{Cells: cells}
	if p.conditions != nil {
		row.Conditions = p.conditions(obj)
	}
	return row, nil
}

// For returns the printer of a group/kind; false when the kind has none of
// its own and Table prints NAME and AGE only.
func For(gk schema.GroupKind) (Printer, bool) {
	p, ok := byKind()[gk]
	return p, ok
}

// printerFor returns the printer of a group/kind, or the NAME/AGE printer.
func printerFor(gk schema.GroupKind) Printer {
	if p, ok := For(gk); ok {
		return p
	}
	return defaultPrinter()
}

// Column helpers. Descriptions are the upstream field documentation, read
// from the k8s.io/api types.
var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

func colName() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
}

func colAge() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDoc["creationTimestamp"]}
}

func colPlain(name, typ, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: desc}
}

func colWide(name, typ, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: desc, Priority: 1}
}

// Descriptions of the container columns of workload printers.
const (
	printContainersDesc = "Names of each container in the template."
	printImagesDesc     = "Images referenced by each container in the template."
)

// cellAge is the AGE of a timestamp: how long before now, or <unknown>.
func cellAge(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// cellAgeMicro is cellAge for a MicroTime.
func cellAgeMicro(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// newPrinter adapts a typed cell function to a Printer.
func newPrinter[T any](columns []metav1.TableColumnDefinition, cells func(o *T, now time.Time) []any) Printer {
	return Printer{
		columns: columns,
		cells: func(obj any, now time.Time) ([]any, error) {
			o, ok := obj.(*T)
			if !ok || o == nil {
				return nil, fmt.Errorf("cannot print %T as %T", obj, (*T)(nil))
			}
			return cells(o, now), nil
		},
	}
}

// defaultPrinter prints NAME and AGE from the metadata of any object.
func defaultPrinter() Printer {
	return Printer{
		columns: []metav1.TableColumnDefinition{colName(), colAge()},
		cells: func(obj any, now time.Time) ([]any, error) {
			om := objectMeta(obj)
			if om == nil {
				return nil, fmt.Errorf("%T has no metadata", obj)
			}
			return []any{om.Name, cellAge(om.CreationTimestamp, now)}, nil
		},
	}
}
