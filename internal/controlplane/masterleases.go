package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/kubernetes/pkg/controlplane/reconcilers"
)

// masterLeases is upstream's reconcilers.Leases on etcd: one key per API
// server address, <prefix>/masterleases/<ip>, held by an etcd lease of
// ttl that each API server renews on every reconcile, so that an API
// server that stops without saying so drops out of the kubernetes
// Service's endpoints once its lease expires. Keys and values are
// kube-apiserver's (an Endpoints object naming the address, JSON, which
// its storage decodes too).
type masterLeases struct {
	client *clientv3.Client
	prefix string // <etcd prefix>/masterleases/
	ttl    time.Duration
	// timeout bounds each call: upstream's interface takes no context.
	timeout time.Duration
}

var _ reconcilers.Leases = (*masterLeases)(nil)

func newMasterLeases(client *clientv3.Client, etcdPrefix string, ttl time.Duration) *masterLeases {
	return &masterLeases{client: client, prefix: path.Join(etcdPrefix, "masterleases") + "/", ttl: ttl, timeout: 10 * time.Second}
}

func (l *masterLeases) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), l.timeout)
}

// ListLeases returns the addresses of the API servers whose lease holds.
func (l *masterLeases) ListLeases() ([]string, error) {
	ctx, cancel := l.ctx()
	defer cancel()
	resp, err := l.client.Get(ctx, l.prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing API server leases: %w", err)
	}
	ips := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var ep corev1.Endpoints //nolint:staticcheck // SA1019: kube-apiserver's lease value is an Endpoints
		if err := json.Unmarshal(kv.Value, &ep); err != nil || len(ep.Subsets) == 0 || len(ep.Subsets[0].Addresses) == 0 {
			// Not one of ours (another writer's encoding): the key
			// names the address.
			ips = append(ips, strings.TrimPrefix(string(kv.Key), l.prefix))
			continue
		}
		ips = append(ips, ep.Subsets[0].Addresses[0].IP)
	}
	return ips, nil
}

// UpdateLease writes ip's key under a new lease of ttl.
func (l *masterLeases) UpdateLease(ip string) error {
	ctx, cancel := l.ctx()
	defer cancel()
	//nolint:staticcheck // SA1019: kube-apiserver's lease value is an Endpoints
	value, err := json.Marshal(&corev1.Endpoints{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{Name: ip},
		Subsets:    []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: ip}}}}, //nolint:staticcheck // SA1019: as above
	})
	if err != nil {
		return err
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

// RemoveLease deletes ip's key, on a clean shutdown. A missing key is
// upstream's storage not-found error, which tells the kubernetesservice
// controller at start that the last run ended cleanly.
func (l *masterLeases) RemoveLease(ip string) error {
	ctx, cancel := l.ctx()
	defer cancel()
	resp, err := l.client.Delete(ctx, l.prefix+ip)
	if err != nil {
		return fmt.Errorf("removing the API server lease of %s: %w", ip, err)
	}
	if resp.Deleted == 0 {
		return storage.NewKeyNotFoundError(l.prefix+ip, 0)
	}
	return nil
}

// Destroy has nothing to release: the etcd client is the control plane's.
func (l *masterLeases) Destroy() {}
