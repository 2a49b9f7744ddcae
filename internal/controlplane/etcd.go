package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/dnsplane/dnsplane/internal/etcdproc"
	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// connectEtcd starts the embedded etcd (as a supervised child process when
// EtcdMemberCommand is set, else in-process) unless EtcdServers names an
// external cluster, and connects to it. What it starts is added to
// cp.closers, the client first so that it closes before its server.
func (cp *ControlPlane) connectEtcd(ctx context.Context, c Config) (*clientv3.Client, error) {
	endpoints := c.EtcdServers
	clientCfg := storage.ClientConfig{CAFile: c.EtcdCAFile, CertFile: c.EtcdCertFile, KeyFile: c.EtcdKeyFile, Logger: c.Logger}
	var memberTLS storage.EmbeddedTLS
	if len(endpoints) == 0 {
		// The embedded etcd takes only the API server's client certificate
		// (pki/apiserver-etcd-client), as kubeadm sets up a stacked etcd.
		p, err := pki.EnsureEtcd(filepath.Join(c.DataDir, "pki"))
		if err != nil {
			return nil, fmt.Errorf("embedded etcd: %w", err)
		}
		memberTLS = storage.EmbeddedTLS{TrustedCAFile: p.CAFile, CertFile: p.ServerCertFile, KeyFile: p.ServerKeyFile,
			PeerCertFile: p.PeerCertFile, PeerKeyFile: p.PeerKeyFile}
		clientCfg.CAFile, clientCfg.CertFile, clientCfg.KeyFile = p.CAFile, p.ClientCertFile, p.ClientKeyFile
	}
	// A restarted etcd child listens on new ports; the client moves there.
	var current atomic.Pointer[clientv3.Client]
	var sup *etcdproc.Supervisor
	switch {
	case len(endpoints) > 0:
	case len(c.EtcdMemberCommand) > 0:
		var err error
		sup, err = etcdproc.Start(ctx, etcdproc.Config{
			Command:      c.EtcdMemberCommand,
			DataDir:      filepath.Join(c.DataDir, "etcd"),
			TLS:          memberTLS,
			Logger:       c.Logger,
			ReadyTimeout: c.EtcdReadyTimeout,
			OnRestart: func(eps []string) {
				if cl := current.Load(); cl != nil {
					cl.SetEndpoints(eps...)
				}
			},
		})
		if err != nil {
			return nil, err
		}
		cp.closers = append(cp.closers, sup.Close)
		endpoints = sup.Endpoints()
	default:
		e, err := storage.StartEmbedded(ctx, filepath.Join(c.DataDir, "etcd"), c.Logger, storage.WithTLS(memberTLS))
		if err != nil {
			return nil, fmt.Errorf("starting embedded etcd: %w", err)
		}
		cp.closers = append(cp.closers, e.Close)
		endpoints = e.Endpoints()
	}
	clientCfg.Endpoints = endpoints
	client, err := storage.Connect(ctx, clientCfg)
	if err != nil {
		return nil, err
	}
	current.Store(client)
	if sup != nil && !slices.Equal(sup.Endpoints(), endpoints) {
		// It restarted while we connected.
		client.SetEndpoints(sup.Endpoints()...)
	}
	// Close the client before the embedded server it talks to.
	cp.closers = append([]func() error{client.Close}, cp.closers...)
	return client, nil
}
