package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// storagePageSize is how many objects a list or a watch's initial events
// read from etcd at a time when the client did not page itself. Reading a
// large collection in one range held every raw value, every decoded object
// and the whole encoded body at once (28 MB of ConfigMaps cost ~200 MB per
// list in issue 29's probe); one page of 500 — client-go's and kubectl's
// default chunk size — bounds what a list holds to a page's worth, whatever
// the collection's size. The pages are read at the first page's revision
// (the continue token pins it), so the result is the same snapshot a
// single range gives.
const storagePageSize = 500

// streamBufferSize is the write buffer of a streamed list: large enough
// that a list is a few large writes, small enough not to matter per list.
const streamBufferSize = 32 << 10

// storedPages reads the objects under prefix page by page, starting with
// first (already read with opts), and calls fn with each decoded object.
// With opts.Limit > 0 and the client's own limit (paged is false) only
// first is read.
func (s *Server) storedPages(ctx context.Context, res *Resource, prefix string, first storage.ListResult, opts storage.ListOptions, paged bool, fn func(obj any) error) error {
	page := first
	for {
		for i := range page.Items {
			obj, err := store.Decode(&res.Resource, page.Items[i])
			if err != nil {
				return err
			}
			// Drop the raw value as soon as it is decoded: the page's
			// slice would otherwise keep it until the page ends.
			page.Items[i] = storage.KV{}
			if err := fn(obj); err != nil {
				return err
			}
		}
		if !paged || page.Continue == "" {
			return nil
		}
		opts.Continue = page.Continue
		// The continue token carries the revision; asking for it again
		// would be refused only if it differed.
		opts.Revision = 0
		next, err := s.storage.List(ctx, prefix, opts)
		if err != nil {
			return store.Error(&res.Resource, "", err)
		}
		page = next
	}
}

// jsonListWriter writes a <Kind>List as JSON item by item, as kube-apiserver
// 1.33+ streams JSON lists (KEP-5116, "Streaming encoding for LIST
// responses"): the bytes are those json.Marshal of the whole listBody gives,
// but the body is never held whole.
type jsonListWriter struct {
	bw    *bufio.Writer
	items int
	err   error
}

// startJSONList writes the 200, the list's kind and metadata and the
// opening of its items.
func startJSONList(w http.ResponseWriter, res *Resource, lm metav1.ListMeta) (*jsonListWriter, error) {
	head, err := json.Marshal(listHead{
		TypeMeta: metav1.TypeMeta{Kind: res.GVK.Kind + "List", APIVersion: res.APIVersion()},
		ListMeta: lm,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding list metadata: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	lw := &jsonListWriter{bw: bufio.NewWriterSize(w, streamBufferSize)}
	// head is {...}: reopen it for the items.
	head = bytes.TrimSuffix(head, []byte("}"))
	lw.write(head)
	lw.write([]byte(`,"items":[`))
	return lw, lw.err
}

// listHead is listBody without its items.
type listHead struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
}

func (lw *jsonListWriter) write(p []byte) {
	if lw.err == nil {
		_, lw.err = lw.bw.Write(p)
	}
}

// add writes one item.
func (lw *jsonListWriter) add(obj any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encoding list item: %w", err)
	}
	if lw.items > 0 {
		lw.write([]byte{','})
	}
	lw.items++
	lw.write(b)
	return lw.err
}

// end closes the items and the list and flushes.
func (lw *jsonListWriter) end() error {
	lw.write([]byte("]}\n"))
	if lw.err == nil {
		lw.err = lw.bw.Flush()
	}
	return lw.err
}

// protobufListWriter collects a protobuf list's items already encoded, so
// the list holds its encoding (about the size of the response) rather than
// every decoded object until the end. The items' sizes must be known
// before the envelope's header is written (runtime.Unknown carries the
// list's length first), so the items cannot go out as they are read, as a
// JSON list's do; the body is what apimachinery's streaming collections
// encoder writes for the whole typed list (protobufEncoder), byte for byte.
type protobufListWriter struct {
	res   *Resource
	items [][]byte
	size  int // of the encoded items with their field headers
}

// protobufMarshaler is what the k8s.io/api types' generated code provides.
type protobufMarshaler interface {
	Marshal() ([]byte, error)
}

func (pw *protobufListWriter) add(obj any) error {
	m, ok := obj.(protobufMarshaler)
	if !ok {
		return fmt.Errorf("protobuf list of %s: item %T has no protobuf encoding", pw.res.GVK, obj)
	}
	b, err := m.Marshal()
	if err != nil {
		return fmt.Errorf("protobuf list of %s: encoding an item: %w", pw.res.GVK, err)
	}
	pw.items = append(pw.items, b)
	pw.size += 1 + sizeVarint(uint64(len(b))) + len(b)
	return nil
}

// protobufPrefix is the k8s\x00 envelope's magic number.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// write sends the 200 and the list with lm.
func (pw *protobufListWriter) write(w http.ResponseWriter, lm metav1.ListMeta) error {
	lmBytes, err := lm.Marshal()
	if err != nil {
		return fmt.Errorf("protobuf list of %s: encoding its metadata: %w", pw.res.GVK, err)
	}
	total := 1 + sizeVarint(uint64(len(lmBytes))) + len(lmBytes) + pw.size
	gv := pw.res.GVK.GroupVersion()
	unk := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: gv.String(), Kind: pw.res.GVK.Kind + "List"}}
	w.Header().Set("Content-Type", mediaProtobuf)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, streamBufferSize)
	if _, err := bw.Write(protobufPrefix); err != nil {
		return err
	}
	field := func(out io.Writer, tag byte, b []byte) (int, error) {
		hdr := binary.AppendUvarint([]byte{tag}, uint64(len(b)))
		n, err := out.Write(hdr)
		if err != nil {
			return n, err
		}
		m, err := out.Write(b)
		return n + m, err
	}
	_, err = unk.MarshalToWriter(bw, total, func(out io.Writer) (int, error) {
		// ListMeta is field 1, the items field 2, both length-delimited
		// (0x0a, 0x12), as the generated <Kind>List messages have them.
		n, err := field(out, 0x0a, lmBytes)
		if err != nil {
			return n, err
		}
		for i, item := range pw.items {
			m, err := field(out, 0x12, item)
			n += m
			if err != nil {
				return n, err
			}
			pw.items[i] = nil
		}
		return n, nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// sizeVarint is the bytes of v as a protobuf varint.
func sizeVarint(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }
