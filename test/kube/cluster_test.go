package kube

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"

	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/storage"
)

const (
	// serviceRange is kubeadm's default --service-cluster-ip-range.
	serviceRange = "10.96.0.0/12"
	// clusterDNSIP is the cluster DNS Service's IP: the chart's clusterDNS
	// default, which the operator gives its Service (--service-ip); the
	// range's 10th address is kube-dns's on kubeadm clusters.
	clusterDNSIP = "10.96.0.53"
	// podNetwork holds node i's pod CIDR 10.244.<i>.0/24 (flannel's, kubeadm's documented one).
	podNetwork = "10.244.0.0/16"
	// nodeNetwork holds node i's InternalIP 172.18.0.<i> (kind's network).
	nodeNetwork = "172.18.0.0/24"
	// nodeCacheIP is the node cache's address on every node, NodeLocal
	// DNSCache's default.
	nodeCacheIP = "169.254.20.10"
	// agentClusterDNS is the agents' --cluster-dns, kubelet's with
	// NodeLocal DNSCache: the node cache first, then the cluster DNS
	// Service, which pods fall back to (docs/agent.md). The webhook is
	// given the same (install).
	agentClusterDNS = nodeCacheIP + "," + clusterDNSIP
	// startTimeout bounds each start-up wait.
	startTimeout = 2 * time.Minute
	// pollInterval is how often the waits look.
	pollInterval = 100 * time.Millisecond
)

// cluster is a kube-apiserver with etcd, the controllers, the scheduler
// and agent nodes, all of this test run.
type cluster struct {
	dir    string
	server string // https://127.0.0.1:PORT
	// serverCA verifies the server's certificate.
	serverCA string
	bundle   *pki.Bundle
	// admin is a kubeconfig of system:masters, as kubeadm's admin.conf.
	admin string
	cfg   *rest.Config
	cs    kubernetes.Interface
	nodes []*node
	// hostResolvConf is the nodes' resolv.conf (kubelet's --resolv-conf):
	// its search line is the nodes' host search list.
	hostResolvConf string
}

// node is one `dnsplane agent`.
type node struct {
	name, podCIDR, stateDir, kubeconfig string
	proc                                *process
}

// hostSearch is the host search list of every node of the test cluster,
// what $(HOST) expands to.
var hostSearch = []string{"corp.example"}

// startCluster starts etcd and kube-apiserver in this process and the
// controllers, the scheduler and n agents as processes, and returns once
// the nodes are Ready and the default namespace has its ServiceAccount.
func startCluster(t testing.TB, n int) *cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c := &cluster{dir: t.TempDir()}

	// etcd: dnsplane's embedded member (the etcd 3.7.3 of our go.mod, the
	// same server code as the release binary), in this process, on
	// kernel-picked loopback ports with client-certificate TLS.
	etcd, err := storage.StartEmbedded(ctx, filepath.Join(c.dir, "etcd"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := etcd.Close(); err != nil {
			t.Logf("stopping etcd: %v", err)
		}
	})
	ec := etcd.ClientConfig()
	sc := storagebackend.NewDefaultConfig("/registry", nil)
	sc.Transport.ServerList = ec.Endpoints
	sc.Transport.TrustedCAFile, sc.Transport.CertFile, sc.Transport.KeyFile = ec.CAFile, ec.CertFile, ec.KeyFile

	// The cluster CA signs every client certificate, as kubeadm's ca.crt
	// does. The serving certificate is the test server's own (its
	// peer proxy reads it from the server's directory).
	if c.bundle, err = pki.Ensure(filepath.Join(c.dir, "pki"), nil); err != nil {
		t.Fatal(err)
	}
	flags := []string{
		"--client-ca-file=" + c.bundle.CAFile,
		// kubeadm's: the node authorizer and NodeRestriction confine the
		// agents to their nodes; the webhook admission plugins are on by
		// default (the test checks the server's answer, not this list).
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--service-cluster-ip-range=" + serviceRange,
		"--allow-privileged=true",
		// Webhook Services resolve to their endpoints' pod IPs: there is
		// no kube-proxy here, so a Service IP leads nowhere.
		"--enable-aggregator-routing=true",
	}
	opts := kubeapiservertesting.NewDefaultTestServerOptions()
	// The invariant checks scrape metrics at teardown for upstream's own
	// tests; they say nothing about dnsplane.
	opts.DisableInvariantChecks = true
	srv, err := kubeapiservertesting.StartTestServer(t, opts, flags, sc)
	if err != nil {
		t.Fatalf("starting kube-apiserver: %v", err)
	}
	t.Cleanup(srv.TearDownFn)
	c.server = "https://" + net.JoinHostPort("127.0.0.1", fmt.Sprint(srv.ServerOpts.SecureServing.BindPort))
	// The self-signed serving certificate with its CA, as
	// MaybeDefaultWithSelfSignedCerts writes it.
	c.serverCA = filepath.Join(srv.TmpDir, "apiserver.crt")

	c.admin = c.kubeconfig(t, "admin", "kubernetes-admin", "system:masters")
	if c.cfg, err = clientcmd.BuildConfigFromFlags("", c.admin); err != nil {
		t.Fatal(err)
	}
	c.cfg.QPS, c.cfg.Burst = 100, 200
	if c.cs, err = kubernetes.NewForConfig(c.cfg); err != nil {
		t.Fatal(err)
	}

	// kubeadm's identities: the controllers as system:kube-controller-manager
	// with a service account per controller, the scheduler as
	// system:kube-scheduler (both bound by kube-apiserver's bootstrap RBAC).
	kcm := c.kubeconfig(t, "controller-manager", "system:kube-controller-manager")
	startProcess(t, "dnsplane controllers", nil, dnsplaneBin, "controllers", "--kubeconfig", kcm,
		"--leader-elect=false", "--use-service-account-credentials")
	sched := c.kubeconfig(t, "scheduler", "system:kube-scheduler")
	startProcess(t, "dnsplane scheduler", nil, dnsplaneBin, "scheduler", "--kubeconfig", sched, "--leader-elect=false")

	c.hostResolvConf = filepath.Join(c.dir, "host-resolv.conf")
	// The nodes' upstream resolver is never asked: every name the test
	// resolves is the cluster's or a forwarded zone's.
	if err := os.WriteFile(c.hostResolvConf, []byte("search "+hostSearch[0]+"\nnameserver 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		c.startNode(t, i)
	}
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, startTimeout, true, func(ctx context.Context) (bool, error) {
		for _, nd := range c.nodes {
			if !nd.proc.running() {
				return false, fmt.Errorf("agent %s exited: %w", nd.name, nd.proc.err)
			}
			node, err := c.cs.CoreV1().Nodes().Get(ctx, nd.name, metav1.GetOptions{})
			if err != nil || !nodeReady(node) {
				return false, nil
			}
		}
		// A pod needs its namespace's ServiceAccount (ServiceAccount
		// admission): the serviceaccount controller makes it.
		_, err := c.cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		t.Fatalf("waiting for %d Ready nodes and the default ServiceAccount: %v", n, err)
	}
	return c
}

// startNode starts agent i: node n<i>, pod CIDR 10.244.<i>.0/24, whose
// addresses the test's namespace routes locally.
func (c *cluster) startNode(t testing.TB, i int) {
	t.Helper()
	nd := &node{name: fmt.Sprintf("n%d", i), podCIDR: fmt.Sprintf("10.244.%d.0/24", i)}
	nd.stateDir = filepath.Join(c.dir, "nodes", nd.name)
	nd.kubeconfig = c.kubeconfig(t, "node-"+nd.name, "system:node:"+nd.name, "system:nodes")
	nd.proc = startProcess(t, "agent "+nd.name, nil, dnsplaneBin, "agent",
		"--kubeconfig", nd.kubeconfig, "--node-name", nd.name, "--pod-cidr", nd.podCIDR,
		"--state-dir", nd.stateDir, "--node-ip", fmt.Sprintf("172.18.0.%d", i),
		"--resolv-conf", c.hostResolvConf,
		// kubelet's --cluster-dns with NodeLocal DNSCache: the node
		// cache, then the cluster DNS Service.
		"--cluster-dns", agentClusterDNS,
		"--hosts-file", "/dev/null")
	c.nodes = append(c.nodes, nd)
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// kubeconfig writes <dir>/<name>.kubeconfig for a client certificate of
// user in groups, signed by the cluster CA.
func (c *cluster) kubeconfig(t testing.TB, name, user string, groups ...string) string {
	t.Helper()
	dir := filepath.Join(c.dir, "pki")
	certFile, keyFile, err := c.bundle.IssueClientCert(dir, name, user, groups)
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kube"] = &clientcmdapi.Cluster{Server: c.server, CertificateAuthority: c.serverCA}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: keyFile}
	kc.Contexts["kube"] = &clientcmdapi.Context{Cluster: "kube", AuthInfo: user}
	kc.CurrentContext = "kube"
	path := filepath.Join(c.dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
