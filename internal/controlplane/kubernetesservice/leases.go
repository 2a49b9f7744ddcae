package kubernetesservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrNoLease is what Leases.Remove returns for an address that holds no
// lease: at start it says the last run of this API server stopped
// cleanly.
var ErrNoLease = errors.New("no API server lease")

// Leases are the addresses of the API servers sharing one etcd, each held
// while its API server renews it (upstream's reconcilers.Leases, with a
// context).
type Leases interface {
	List(ctx context.Context) ([]string, error)
	Update(ctx context.Context, ip string) error
	// Remove deletes ip's lease; ErrNoLease when it has none.
	Remove(ctx context.Context, ip string) error
}

// EtcdLeases keep one key per API server address,
// <prefix>/masterleases/<ip>, under an etcd lease of TTL that every
// reconcile renews, so that an API server that stops without saying so
// drops out of the kubernetes Service's endpoints once its lease expires.
// Keys and values are kube-apiserver's (an Endpoints object naming the
// address, JSON, which its storage decodes too), so dnsplane and
// kube-apiserver on one etcd see each other.
type EtcdLeases struct {
	client *clientv3.Client
	prefix string // <etcd prefix>/masterleases/
	ttl    time.Duration
}

var _ Leases = (*EtcdLeases)(nil)

// NewEtcdLeases returns the leases under etcdPrefix, each held for ttl.
func NewEtcdLeases(client *clientv3.Client, etcdPrefix string, ttl time.Duration) *EtcdLeases {
	return &EtcdLeases{client: client, prefix: path.Join(etcdPrefix, "masterleases") + "/", ttl: ttl}
}

// List returns the addresses whose lease holds.
func (l *EtcdLeases) List(ctx context.Context) ([]string, error) {
	resp, err := l.client.Get(ctx, l.prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing API server leases: %w", err)
	}
	ips := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var ep corev1.Endpoints //nolint:staticcheck // SA1019: kube-apiserver's lease value is an Endpoints
		if err := json.Unmarshal(kv.Value, &ep); err != nil || len(ep.Subsets) == 0 || len(ep.Subsets[0].Addresses) == 0 {
			// Not JSON (kube-apiserver writes protobuf when told to):
			// the key names the address.
			ips = append(ips, strings.TrimPrefix(string(kv.Key), l.prefix))
			continue
		}
		ips = append(ips, ep.Subsets[0].Addresses[0].IP)
	}
	return ips, nil
}

// Update writes ip's key under a new lease of the TTL.
func (l *EtcdLeases) Update(ctx context.Context, ip string) error {
	//nolint:staticcheck // SA1019: kube-apiserver's lease value is an Endpoints
	value, err := json.Marshal(&corev1.Endpoints{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{Name: ip},
		Subsets:    []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: ip}}}}, //nolint:staticcheck // SA1019: as above
	})
	if err != nil {
		return fmt.Errorf("encoding the API server lease of %s: %w", ip, err)
	}
	lease, err := l.client.Grant(ctx, int64(l.ttl/time.Second))
	if err != nil {
		return fmt.Errorf("granting the API server lease of %s: %w", ip, err)
	}
	if _, err := l.client.Put(ctx, l.prefix+ip, string(value), clientv3.WithLease(lease.ID)); err != nil {
		return fmt.Errorf("renewing the API server lease of %s: %w", ip, err)
	}
	return nil
}

// Remove deletes ip's key, on a clean stop.
func (l *EtcdLeases) Remove(ctx context.Context, ip string) error {
	resp, err := l.client.Delete(ctx, l.prefix+ip)
	if err != nil {
		return fmt.Errorf("removing the API server lease of %s: %w", ip, err)
	}
	if resp.Deleted == 0 {
		return fmt.Errorf("%s: %w", l.prefix+ip, ErrNoLease)
	}
	return nil
}
