package apiserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
