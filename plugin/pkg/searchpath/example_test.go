package searchpath_test

import (
	"fmt"

	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// A ClusterFirstWithAutopath pod in ns1 has one search path; its resolver
// appends it to "svc1", and the node cache reads the result back.
func ExampleParse() {
	qname := "svc1." + searchpath.SearchName("ns1", "cluster.local") + "."
	fmt.Println(qname)

	n, ok := searchpath.Parse(qname, "cluster.local")
	fmt.Printf("%+v %v\n", n, ok)

	// A base may itself contain a "search" label: the name is read right to
	// left from the configured cluster domain, so it is not ambiguous.
	n, ok = searchpath.Parse("a.search.b.search.ns1.cluster.local.ap.k8s.io.", "cluster.local")
	fmt.Printf("%+v %v\n", n, ok)

	// Outside the zone, or for another cluster domain: not an autopath name.
	_, ok = searchpath.Parse("svc1.ns1.svc.cluster.local.", "cluster.local")
	fmt.Println(ok)
	_, ok = searchpath.Parse(qname, "example.org")
	fmt.Println(ok)
	// Output:
	// svc1.search.ns1.cluster.local.ap.k8s.io.
	// {Base:svc1 Namespace:ns1 ClusterDomain:cluster.local} true
	// {Base:a.search.b Namespace:ns1 ClusterDomain:cluster.local} true
	// false
	// false
}

// Without the option (node cache down or bypassed), the cluster DNS expands
// with the cluster part of a ClusterFirst pod's search list.
func ExampleDerived() {
	fmt.Println(searchpath.Derived("ns1", "cluster.local."))
	// Output:
	// [ns1.svc.cluster.local svc.cluster.local cluster.local]
}

// The candidates, in the order the cluster DNS tries them: each search
// domain appended, then the bare name last.
func ExampleCandidates() {
	list := append(searchpath.Derived("ns1", "cluster.local"), "corp.example.")
	for _, c := range searchpath.Candidates("svc1", list) {
		fmt.Println(c)
	}
	// Candidate gives one of them without building the rest.
	fmt.Println(searchpath.Candidate("svc1", list, 1))
	// Output:
	// svc1.ns1.svc.cluster.local.
	// svc1.svc.cluster.local.
	// svc1.cluster.local.
	// svc1.corp.example.
	// svc1.
	// svc1.svc.cluster.local.
}

// The option value on the wire: ASCII, comma-separated, no trailing dots, in
// expansion order. Encode refuses what Decode would, so a node cache never
// sends a list the cluster DNS drops.
func ExampleEncode() {
	value, err := searchpath.Encode([]string{"ns1.svc.cluster.local.", "svc.cluster.local", "cluster.local", "corp.example"})
	fmt.Printf("%s %v\n", value, err)

	_, err = searchpath.Encode([]string{"ns1.svc.cluster.local", "bad domain"})
	fmt.Println(err)
	// Output:
	// ns1.svc.cluster.local,svc.cluster.local,cluster.local,corp.example <nil>
	// search list option entry 1 "bad domain": label "bad domain" has the character ' '
}

func ExampleDecode() {
	list, err := searchpath.Decode([]byte("ns1.svc.cluster.local,svc.cluster.local,cluster.local"))
	fmt.Println(list, err)

	// An empty value is an empty list, not an error.
	list, err = searchpath.Decode(nil)
	fmt.Println(len(list), err)

	// Bounded like pod dnsConfig: at most MaxEntries entries, MaxChars bytes.
	many := make([]byte, 0, 2*(searchpath.MaxEntries+1))
	for i := range searchpath.MaxEntries + 1 {
		if i > 0 {
			many = append(many, ',')
		}
		many = append(many, 'a')
	}
	_, err = searchpath.Decode(many)
	fmt.Println(err)
	// Output:
	// [ns1.svc.cluster.local svc.cluster.local cluster.local] <nil>
	// 0 <nil>
	// search list option has 33 entries, more than 32
}

// The node cache replaces whatever option with that code the client sent,
// so a pod cannot choose the list the cluster DNS expands with.
func ExampleSetOption() {
	m := new(dns.Msg)
	m.SetQuestion("svc1.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
	m.SetEdns0(dns.DefaultMsgSize, false)
	opt := m.IsEdns0()
	opt.Option = append(opt.Option, &dns.EDNS0_LOCAL{Code: searchpath.DefaultOptionCode, Data: []byte("attacker.example")})

	if err := searchpath.SetOption(m, searchpath.DefaultOptionCode, searchpath.Derived("ns1", "cluster.local")); err != nil {
		fmt.Println(err)
		return
	}
	list, found, err := searchpath.GetOption(m, searchpath.DefaultOptionCode)
	fmt.Println(list, found, err, len(m.IsEdns0().Option))
	// Output:
	// [ns1.svc.cluster.local svc.cluster.local cluster.local] true <nil> 1
}

// Later duplicates go (case and a trailing dot ignored): they name a
// candidate already asked, so the answer cannot change.
func ExampleDedupe() {
	fmt.Println(searchpath.Dedupe([]string{"ns1.svc.cluster.local", "corp.example", "NS1.svc.cluster.local.", "corp.example"}))
	// Output:
	// [ns1.svc.cluster.local corp.example]
}
