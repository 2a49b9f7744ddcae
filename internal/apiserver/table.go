package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/dnsplane/dnsplane/internal/negotiation"
)

// WantsTable reports whether the Accept header asks for a meta.k8s.io Table
// (application/json;as=Table;v=v1;g=meta.k8s.io, or v1beta1) in preference
// to plain JSON, and which Table version. kubectl get sends
// "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json".
func WantsTable(accept string) (version string, ok bool) {
	r, ok := negotiation.PreferredKind(accept, func(r negotiation.Range) bool {
		v := r.Params["v"]
		return r.JSONAs(metav1.GroupName, "Table") && (v == "v1" || v == "v1beta1")
	})
	return r.Params["v"], ok
}

// Values of the includeObject query parameter of Table requests.
const (
	includeObjectNone     = string(metav1.IncludeNone)
	includeObjectMetadata = string(metav1.IncludeMetadata)
	includeObjectObject   = string(metav1.IncludeObject)
)

// Table builds the meta.k8s.io/v1 Table kube-apiserver returns for objects
// of one resource. objs are pointers to the Go types api.New returns for
// res.GVK. includeObject is the ?includeObject= value: "" or "Metadata" puts
// a PartialObjectMetadata in each row (kube's default), "Object" the whole
// object, "None" nothing; anything else is a 400. listMeta carries the
// resourceVersion and continue token of a list. now is the clock the AGE
// columns count from.
//
// The Table is always meta.k8s.io/v1; a v1beta1 response differs only in
// the top-level apiVersion, which the caller may set.
//
// As kube-apiserver does, every cell is filled, including the priority 1
// (-o wide) columns; kubectl hides those itself.
func Table(res *Resource, objs []any, includeObject string, listMeta metav1.ListMeta, now time.Time) (*metav1.Table, error) {
	switch includeObject {
	case "", includeObjectMetadata, includeObjectObject, includeObjectNone:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", includeObject))
	}
	p := tablePrinterFor(res.GVK.GroupKind())
	t := &metav1.Table{
		TypeMeta:          metav1.TypeMeta{Kind: "Table", APIVersion: metav1.SchemeGroupVersion.String()},
		ListMeta:          listMeta,
		ColumnDefinitions: p.columns,
		Rows:              make([]metav1.TableRow, 0, len(objs)),
	}
	for _, obj := range objs {
		cells, err := p.cells(obj, now)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("printing %s: %w", res.GroupResource(), err))
		}
		row := metav1.TableRow{Cells: cells}
		if p.conditions != nil {
			row.Conditions = p.conditions(obj)
		}
		if row.Object, err = tableRowObject(res.GVK, obj, includeObject); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// rowObject renders row.object for the includeObject mode.
func tableRowObject(gvk schema.GroupVersionKind, obj any, includeObject string) (runtime.RawExtension, error) {
	switch includeObject {
	case includeObjectNone:
		return runtime.RawExtension{}, nil
	case includeObjectObject:
		raw, err := json.Marshal(obj)
		if err != nil {
			return runtime.RawExtension{}, err
		}
		return runtime.RawExtension{Raw: tableWithTypeMeta(raw, gvk)}, nil
	default:
		om := tableObjectMeta(obj)
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
func tableWithTypeMeta(raw []byte, gvk schema.GroupVersionKind) []byte {
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

// objectMetaOf returns the ObjectMeta every served type embeds.
func tableObjectMeta(obj any) *metav1.ObjectMeta {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if om, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			return om
		}
	}
	return nil
}

// tablePrinter prints one resource: its column definitions and a function
// from an object to the cells of its row, in column order.
type tablePrinter struct {
	columns    []metav1.TableColumnDefinition
	cells      func(obj any, now time.Time) ([]any, error)
	conditions func(obj any) []metav1.TableRowCondition
}

// printerFor returns the printer of a group/kind, or the NAME/AGE printer.
func tablePrinterFor(gk schema.GroupKind) tablePrinter {
	if p, ok := printersByKind[gk]; ok {
		return p
	}
	return defaultTablePrinter()
}

// Column helpers. Descriptions are the upstream field documentation, read
// from the k8s.io/api types.
var printObjectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

func colName() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: printObjectMetaDoc["name"]}
}

func colAge() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: printObjectMetaDoc["creationTimestamp"]}
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

// since is the AGE of a timestamp: how long before now, or <unknown>.
func cellAge(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// sinceMicro is since for a MicroTime.
func cellAgeMicro(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// printerOf adapts a typed cell function to a tablePrinter.
func newTablePrinter[T any](columns []metav1.TableColumnDefinition, cells func(o *T, now time.Time) []any) tablePrinter {
	return tablePrinter{
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
func defaultTablePrinter() tablePrinter {
	return tablePrinter{
		columns: []metav1.TableColumnDefinition{colName(), colAge()},
		cells: func(obj any, now time.Time) ([]any, error) {
			om := tableObjectMeta(obj)
			if om == nil {
				return nil, fmt.Errorf("%T has no metadata", obj)
			}
			return []any{om.Name, cellAge(om.CreationTimestamp, now)}, nil
		},
	}
}
