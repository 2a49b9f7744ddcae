//go:build linux

package nodecachenet

import (
	"encoding/binary"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"golang.org/x/sys/unix"
)

// ruleComment is each rule's comment (`nft list table inet
// dnsplane-nodecache` shows it), NodeLocal DNSCache's wording.
const ruleComment = "dnsplane nodecache: skip conntrack"

// Chains of the table: base chains at raw priority (-300), which runs
// before conntrack (-200), so an untracked packet is never looked up or
// entered, and kube-proxy's DNAT (nat, -100) never sees it.
const (
	chainPrerouting = "prerouting"
	chainOutput     = "output"
)

// ruleSpec is one NOTRACK rule: packets of proto whose source (src) or
// destination address is addr and whose source or destination port is
// port.
type ruleSpec struct {
	chain string
	proto byte // unix.IPPROTO_UDP or unix.IPPROTO_TCP
	addr  netip.Addr
	src   bool // match the source address and port, else the destination
	port  uint16
}

// ruleSpecs are the rules for c, as node-cache's iptables rules
// (kubernetes/dns pkg/netif and cmd/node-cache/app): queries arriving
// from pods (prerouting, to the address), queries from host-network
// clients (output, to the address) and the answers (output, from the
// address), for UDP and TCP on every port.
func ruleSpecs(c Config) []ruleSpec {
	var out []ruleSpec
	for _, a := range c.Addresses {
		for _, p := range c.Ports {
			for _, proto := range []byte{unix.IPPROTO_UDP, unix.IPPROTO_TCP} {
				out = append(out,
					ruleSpec{chain: chainPrerouting, proto: proto, addr: a, port: p},
					ruleSpec{chain: chainOutput, proto: proto, addr: a, src: true, port: p},
					ruleSpec{chain: chainOutput, proto: proto, addr: a, port: p},
				)
			}
		}
	}
	return out
}

// exprs is r as nftables expressions, what `nft` writes for
// `meta nfproto ipv4 ip daddr A meta l4proto udp udp dport P notrack`.
func (r ruleSpec) exprs() []expr.Any {
	nfproto, offset := byte(unix.NFPROTO_IPV4), uint32(16) // IPv4 daddr
	if r.addr.Is6() {
		nfproto, offset = unix.NFPROTO_IPV6, 24 // IPv6 daddr
	}
	if r.src {
		offset -= uint32(r.addr.BitLen() / 8) // saddr precedes daddr
	}
	portOffset := uint32(2) // dport; sport is at 0 in both UDP and TCP
	if r.src {
		portOffset = 0
	}
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{nfproto}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: uint32(r.addr.BitLen() / 8)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: r.addr.AsSlice()},
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{r.proto}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: portOffset, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binary.BigEndian.AppendUint16(nil, r.port)},
		&expr.Notrack{},
	}
}

// table and chains of c.
func tableOf(c Config) *nftables.Table {
	return &nftables.Table{Name: c.Table, Family: nftables.TableFamilyINet}
}

func chainsOf(t *nftables.Table) map[string]*nftables.Chain {
	return map[string]*nftables.Chain{
		chainPrerouting: {Name: chainPrerouting, Table: t, Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityRaw},
		chainOutput:     {Name: chainOutput, Table: t, Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityRaw},
	}
}

// comment is the rules' user data.
var comment = userdata.AppendString(nil, userdata.TypeComment, ruleComment)
