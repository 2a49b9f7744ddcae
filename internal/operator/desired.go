// Package operator is the DNS operator: it reconciles the DNS object
// "default" into the cluster DNS's ConfigMap (the rendered Corefile), its
// Service and its DaemonSet, and reports what it sees in the DNS status.
// The desired* and status functions are pure; the Reconciler does the I/O
// and the Controller drives it from informers through a work queue.
// docs/dns-operator.md describes the objects and the conditions.
package operator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/dnsspec"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

// The managed objects' names, as OpenShift's (openshift-dns/dns-default).
const (
	Namespace = "dnsplane-system"
	Name      = "dns-default"
	// CorefileKey is the ConfigMap key holding the Corefile.
	CorefileKey = "Corefile"
	// CorefileHashAnnotation on the DaemonSet's pod template is the hash of
	// the published Corefile: a changed Corefile changes the template and
	// so rolls the pods (docs/dns-operator.md, "Rollout").
	CorefileHashAnnotation = "dns.operator.dnsplane.io/corefile-hash"
	// OwnerLabel marks the objects the operator manages.
	OwnerLabel = "dns.operator.dnsplane.io/owning-dns"
	// DefaultImage is the image the DaemonSet's pods run: the data-plane
	// image, whose binary has the dns command and no control plane
	// (docs/kubernetes.md, "Images"), at this tree's release.
	DefaultImage = "ghcr.io/dnsplane/dnsplane-dns:v0.1.0"
)

// The DaemonSet's pods listen unprivileged on 5353 and expose metrics on
// 9153; the Service maps 53 to 5353 (render.Options' defaults).
const (
	podDNSPort     = 5353
	podMetricsPort = 9153
	corefileDir    = "/etc/dnsplane/corefile"
)

// InProcessCABundleDir is where the in-process cluster DNS of `dnsplane
// up` writes the CA bundles of the operator's ConfigMap, under its data
// dir; the operator renders the Corefile's tls lines with it.
func InProcessCABundleDir(dataDir string) string {
	return filepath.Join(dataDir, "cluster-dns", "ca-bundles")
}

// ServiceIP is the cluster DNS Service's address: the 10th address of the
// service range, as kube-dns's 10.96.0.10 in 10.96.0.0/12.
func ServiceIP(serviceRange *net.IPNet) (net.IP, error) {
	base := serviceRange.IP.Mask(serviceRange.Mask)
	ones, bits := serviceRange.Mask.Size()
	if bits-ones < 4 { // fewer than 16 addresses: no 10th host address
		return nil, fmt.Errorf("service range %s is too small for the cluster DNS address (the 10th)", serviceRange)
	}
	n := new(big.Int).SetBytes(base)
	n.Add(n, big.NewInt(10))
	b := n.Bytes()
	ip := make(net.IP, len(base))
	copy(ip[len(ip)-len(b):], b)
	return ip, nil
}

// ServiceAddress is where pods reach the cluster DNS Service: its
// ServiceIP, port 53. No forwarder may name it: its queries would come
// back to the cluster DNS (dnsspec.ValidateNotOwn).
func ServiceAddress(serviceRange *net.IPNet) (netip.AddrPort, error) {
	ip, err := ServiceIP(serviceRange)
	if err != nil {
		return netip.AddrPort{}, err
	}
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("service range %s: no address", serviceRange)
	}
	return netip.AddrPortFrom(a.Unmap(), dnsspec.DNSPort), nil
}

// CorefileHash is the hash the pod template carries.
func CorefileHash(corefile []byte) string {
	sum := sha256.Sum256(corefile)
	return hex.EncodeToString(sum[:])[:16]
}

func labels() map[string]string {
	return map[string]string{OwnerLabel: operatorv1.DefaultName}
}

func desiredNamespace() *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
}

// desiredConfigMap holds the Corefile and a copy of each CA bundle TLS
// forwarders name, under render.CABundleFile(name): the cluster DNS
// reads them beside its Corefile.
func desiredConfigMap(corefile []byte, caBundles map[string]string) *corev1.ConfigMap {
	data := map[string]string{CorefileKey: string(corefile)}
	for name, pem := range caBundles {
		data[render.CABundleFile(name)] = pem
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: labels()},
		Data:       data,
	}
}

func desiredService(clusterIP string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: labels()},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: clusterIP,
			Selector:  labels(),
			Ports: []corev1.ServicePort{
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(podDNSPort)},
				{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: intstr.FromInt32(podDNSPort)},
				{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: podMetricsPort, TargetPort: intstr.FromInt32(podMetricsPort)},
			},
		},
	}
}

// desiredDaemonSet runs `dnsplane dns --conf` on the mounted Corefile on
// every node. The Corefile hash in the template rolls the pods on every
// change; maxUnavailable 0 and maxSurge 10% keep every node served while
// they roll (OpenShift's settings, reference OCPBUGS-20024).
func desiredDaemonSet(image, corefileHash string) *appsv1.DaemonSet {
	maxSurge := intstr.FromString("10%")
	maxUnavailable := intstr.FromInt32(0)
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: labels()},
		Spec: appsv1.DaemonSetSpec{
			Selector:        &metav1.LabelSelector{MatchLabels: labels()},
			MinReadySeconds: 9,
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: &maxSurge, MaxUnavailable: &maxUnavailable},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      labels(),
					Annotations: map[string]string{CorefileHashAnnotation: corefileHash},
				},
				Spec: corev1.PodSpec{
					// The pods resolve upstream names through the node's
					// resolv.conf, never through themselves.
					DNSPolicy:         corev1.DNSDefault,
					PriorityClassName: "system-node-critical",
					NodeSelector:      map[string]string{"kubernetes.io/os": "linux"},
					Containers: []corev1.Container{{
						Name:  "dns",
						Image: image,
						Args:  []string{"dns", "--conf", corefileDir + "/" + CorefileKey},
						Ports: []corev1.ContainerPort{
							{Name: "dns", ContainerPort: podDNSPort, Protocol: corev1.ProtocolUDP},
							{Name: "dns-tcp", ContainerPort: podDNSPort, Protocol: corev1.ProtocolTCP},
							{Name: "metrics", ContainerPort: podMetricsPort, Protocol: corev1.ProtocolTCP},
						},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8181)}},
							PeriodSeconds: 3,
						},
						LivenessProbe: &corev1.Probe{
							ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(8080)}},
							InitialDelaySeconds: 60,
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "corefile", MountPath: corefileDir, ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{
						Name: "corefile",
						VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							// Every key: the Corefile and the CA bundles
							// (render.DefaultCABundleDir is this mount).
							LocalObjectReference: corev1.LocalObjectReference{Name: Name},
						}},
					}},
				},
			},
		},
	}
}
