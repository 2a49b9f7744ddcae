package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Lists the client does not page are read in pages of storagePageSize
// (liststream.go); whatever the form of the answer, they hold every object
// once, in order, at one resourceVersion.
func TestListsAcrossStoragePages(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	const n = 2*storagePageSize + 7
	fillConfigMaps(t, ts.run.Server, ns, n, 10)
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	base := ts.run.URL + "/api/v1/namespaces/" + ns + "/configmaps"
	get := func(t *testing.T, url, accept string) []byte {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", url, resp.Status, body)
		}
		return body
	}
	type item struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	tests := []struct {
		name, query, accept string
		want                int
	}{
		{"json", "", "", n},
		{"json, label selector", "?labelSelector=parity%3Deven", "", (n + 1) / 2},
		{"table", "", "application/json;as=Table;g=meta.k8s.io;v=v1", n},
		{"table, label selector", "?labelSelector=parity%3Dodd", "application/json;as=Table;g=meta.k8s.io;v=v1", n / 2},
		{"metadata", "", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", n},
	}
	t.Run("protobuf", func(t *testing.T) {
		t.Parallel()
		pcfg := rest.CopyConfig(ts.config)
		pcfg.ContentType = mediaProtobuf
		list, err := kubernetes.NewForConfigOrDie(pcfg).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "parity=odd"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != n/2 || list.ResourceVersion == "" || list.Continue != "" {
			t.Fatalf("%d items, resourceVersion %q, continue %q; want %d, one, none", len(list.Items), list.ResourceVersion, list.Continue, n/2)
		}
		for i := 1; i < len(list.Items); i++ {
			if list.Items[i-1].Name >= list.Items[i].Name {
				t.Fatalf("items out of order or repeated: %q then %q", list.Items[i-1].Name, list.Items[i].Name)
			}
		}
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := get(t, base+tc.query, tc.accept)
			var list struct {
				Kind     string          `json:"kind"`
				Metadata metav1.ListMeta `json:"metadata"`
				Items    []item          `json:"items"`
				Rows     []struct {
					Object item `json:"object"`
				} `json:"rows"`
			}
			if err := json.Unmarshal(body, &list); err != nil {
				t.Fatalf("decoding %.200s: %v", body, err)
			}
			names := make([]string, 0, len(list.Items)+len(list.Rows))
			for _, it := range list.Items {
				names = append(names, it.Metadata.Name)
			}
			for _, row := range list.Rows {
				names = append(names, row.Object.Metadata.Name)
			}
			if len(names) != tc.want {
				t.Fatalf("%s: %d items, want %d", list.Kind, len(names), tc.want)
			}
			for i := 1; i < len(names); i++ {
				if names[i-1] >= names[i] {
					t.Fatalf("items out of order or repeated: %q then %q", names[i-1], names[i])
				}
			}
			if list.Metadata.ResourceVersion == "" || list.Metadata.Continue != "" || list.Metadata.RemainingItemCount != nil {
				t.Errorf("list metadata %+v, want a resourceVersion and no continue", list.Metadata)
			}
		})
	}
}

// A protobuf list held as encoded items is, byte for byte, what the
// streaming collections encoder writes for the whole typed list.
func TestProtobufListWriterMatchesEncoder(t *testing.T) {
	t.Parallel()
	res := configMapResource(t)
	lm := metav1.ListMeta{ResourceVersion: "42"}
	for _, n := range []int{0, 1, 3, 200} {
		items := make([]any, 0, n)
		pw := &protobufListWriter{res: res}
		for i := range n {
			cm := &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "default", ResourceVersion: fmt.Sprint(i + 1)},
				Data:       map[string]string{"k": strings.Repeat("v", i*10)},
			}
			items = append(items, cm)
			if err := pw.add(cm); err != nil {
				t.Fatal(err)
			}
		}
		list, err := protobufList(res, items, lm)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := encodeProtobuf(list, &want); err != nil {
			t.Fatal(err)
		}
		got := httptest.NewRecorder()
		if err := pw.write(got, lm); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Body.Bytes(), want.Bytes()) {
			t.Errorf("%d items: the list differs from the encoder's (%d bytes, want %d)", n, got.Body.Len(), want.Len())
		}
		if ct := got.Header().Get("Content-Type"); ct != mediaProtobuf {
			t.Errorf("Content-Type %q, want %q", ct, mediaProtobuf)
		}
	}
}
