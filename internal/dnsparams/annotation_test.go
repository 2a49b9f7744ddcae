package dnsparams

import (
	"reflect"
	"strings"
	"testing"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

func TestEncodeIsCanonical(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		p    *dpcorev1.PodDNSParams
		want string
	}{
		{"docs example", &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{
			Search: []string{"$(NAMESPACE).svc.$(CLUSTER)", "my.dns.search.suffix", "$(HOST)"}, Options: []string{"ndots:2"}}},
			`{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)","my.dns.search.suffix","$(HOST)"],"options":["ndots:2"]}}`},
		{"options only", &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Options: []string{"edns0"}}}, `{"custom":{"options":["edns0"]}}`},
		{"no custom", &dpcorev1.PodDNSParams{}, `{}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Encode(tt.p)
			if got != tt.want {
				t.Fatalf("Encode = %s, want %s", got, tt.want)
			}
			back, err := Decode(got)
			if err != nil || !reflect.DeepEqual(back, tt.p) {
				t.Fatalf("Decode(Encode(p)) = %#v, %v; want %#v", back, err, tt.p)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	const notObject = "must be a JSON object of spec.dnsParams"
	for _, tt := range []struct {
		name    string
		value   string
		want    *dpcorev1.PodDNSParams
		wantErr string // substring; "" = valid
	}{
		{name: "canonical", value: `{"custom":{"search":["a.com"]}}`,
			want: &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: []string{"a.com"}}}},
		{name: "whitespace and field order do not matter", value: " {\n \"custom\": {\"options\": [\"ndots:1\"], \"search\": [\"a.com\"]}}\n",
			want: &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: []string{"a.com"}, Options: []string{"ndots:1"}}}},
		{name: "empty", value: "", wantErr: notObject},
		{name: "null", value: "null", wantErr: notObject},
		{name: "array", value: `[{"custom":{}}]`, wantErr: notObject},
		{name: "string", value: `"{}"`, wantErr: notObject},
		{name: "not JSON", value: "{custom: {search: [a.com]}}", wantErr: notObject},
		{name: "trailing data", value: `{"custom":{}} {}`, wantErr: notObject},
		{name: "unknown field", value: `{"custom":{"searches":["a.com"]}}`, wantErr: `unknown field "custom.searches"`},
		{name: "field name in another case", value: `{"Custom":{"search":["a.com"]}}`, wantErr: `unknown field "Custom"`},
		{name: "repeated field", value: `{"custom":{"search":["a.com"],"search":["b.com"]}}`, wantErr: `duplicate field "custom.search"`},
		{name: "wrong type", value: `{"custom":{"search":"a.com"}}`, wantErr: notObject},
		{name: "too big", value: `{"custom":{"search":["` + strings.Repeat("a", MaxAnnotationBytes) + `"]}}`, wantErr: "must have at most 262144 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Decode(tt.value)
			if tt.wantErr == "" {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("Decode = %#v, %v; want %#v", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Decode error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// FuzzDecode: the annotation is anyone's input (a user's manifest, a
// controller's copy); Decode must never panic, and whatever it accepts must
// encode to a value it accepts again, to the same dnsParams.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)","$(HOST)"],"options":["ndots:2"]}}`,
		`{}`, `null`, `{"custom":null}`, `{"custom":{"search":[null]}}`, `{"custom":{"search":"x"}}`,
		`{"custom":{},"custom":{}}`, `{"a":1}`, "\x00", `{"custom":{"options":["\ud800"]}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		p, err := Decode(value)
		if err != nil {
			return
		}
		again, err := Decode(Encode(p))
		if err != nil {
			t.Fatalf("Decode(%q) accepted, but not its encoding %q: %v", value, Encode(p), err)
		}
		if Encode(again) != Encode(p) {
			t.Fatalf("encoding not stable: %q then %q", Encode(p), Encode(again))
		}
	})
}
