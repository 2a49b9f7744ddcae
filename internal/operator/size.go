package operator

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// The API's size limits the operator's writes must fit
// (docs/dns-operator.md, "Size limits"). A write over one fails every
// time, so the operator checks before it writes and says what did not
// fit, instead of retrying a write that cannot succeed.
const (
	// maxConfigMapData is core validation's limit on a ConfigMap's data,
	// the sum of its values (ValidateConfigMap: MaxSecretSize, 1 MiB).
	maxConfigMapData = corev1.MaxSecretSize
	// maxObjectBytes is etcd's default --max-request-bytes (1.5 MiB), the
	// largest object's JSON dnsplane's embedded etcd stores (and
	// kube-apiserver's etcd, unless raised).
	maxObjectBytes = 3 << 19
	// objectSlack is kept free for what the server adds to the DNS on a
	// status write (managedFields, resourceVersion, the last-applied
	// annotation a client may send later).
	objectSlack = 32 << 10
	// maxConditionMessage is metav1.Condition's limit on a message
	// (the API server refuses a longer one).
	maxConditionMessage = 32768
)

// configMapTooLarge says why cm cannot be stored because of its size, ""
// when it fits: the Corefile plus the CA bundles copied beside it.
func configMapTooLarge(cm *corev1.ConfigMap) string {
	total, bundles := 0, 0
	for k, v := range cm.Data {
		total += len(v)
		if k != CorefileKey {
			bundles += len(v)
		}
	}
	if total <= maxConfigMapData {
		return ""
	}
	return fmt.Sprintf("ConfigMap %s/%s would hold %d bytes (the Corefile %d, its CA bundles %d), more than the %d bytes a ConfigMap's data may hold; forward to fewer domains or use smaller CA bundles",
		Namespace, Name, total, len(cm.Data[CorefileKey]), bundles, maxConfigMapData)
}

// fitStatus makes dns, whose status is about to be written, fit the
// object size limit: when it does not, status.upstreams keeps only the
// entries that fit, the unhealthy ones first, and the UpstreamsAvailable
// condition says how many were left out. It returns that note, "" when
// nothing was cut. Condition messages are cut to the API's limit in any
// case.
func fitStatus(dns *operatorv1.DNS) string {
	for i := range dns.Status.Conditions {
		dns.Status.Conditions[i].Message = cutMessage(dns.Status.Conditions[i].Message)
	}
	size := jsonSize(dns)
	budget := maxObjectBytes - objectSlack
	if size <= budget || len(dns.Status.Upstreams) == 0 {
		return ""
	}
	ups := dns.Status.Upstreams
	dns.Status.Upstreams = nil
	left := budget - jsonSize(dns) - len(`,"upstreams":[]`)
	keep := make([]bool, len(ups))
	kept := 0
	for _, healthy := range []bool{false, true} {
		for i, u := range ups {
			if u.Healthy != healthy {
				continue
			}
			n := jsonSize(u) + 1 // the comma
			if n > left {
				continue
			}
			keep[i], left, kept = true, left-n, kept+1
		}
	}
	for i, u := range ups {
		if keep[i] {
			dns.Status.Upstreams = append(dns.Status.Upstreams, u)
		}
	}
	note := fmt.Sprintf("status.upstreams lists %d of the %d nameservers forwarded to (the unhealthy ones first): all of them would make the DNS object %d bytes, more than the %d bytes etcd stores per object (less %d kept free).",
		kept, len(ups), size, maxObjectBytes, objectSlack)
	if c := meta.FindStatusCondition(dns.Status.Conditions, operatorv1.DNSUpstreamsAvailable); c != nil {
		c.Message = cutTo(c.Message, maxConditionMessage-len(note)-1) + " " + note
	}
	return note
}

// cutMessage cuts a condition message to the API's limit.
func cutMessage(msg string) string { return cutTo(msg, maxConditionMessage) }

// cutTo cuts msg to n bytes, saying so.
func cutTo(msg string, n int) string {
	const more = " … (cut to the condition message limit)"
	if len(msg) <= n {
		return msg
	}
	return strings.ToValidUTF8(msg[:max(n-len(more), 0)], "") + more
}

func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil { // the API types always marshal
		return 0
	}
	return len(b)
}
