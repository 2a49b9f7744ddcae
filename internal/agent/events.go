package agent

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// EventSource is the events' source.component, as kubelet's is "kubelet".
const EventSource = "dnsplane-agent"

// events records pod events through client-go's broadcaster (its
// EventCorrelator aggregates and rate-limits, as for kubelet), and emits each
// (pod UID, reason, message) once: a resync or a restart of the agent does
// not emit a warning the pod already has.
type events struct {
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	node        string

	mu      sync.Mutex
	emitted map[types.UID]map[eventKey]bool
}

type eventKey struct{ reason, message string }

func newEvents(ctx context.Context, kube kubernetes.Interface, node string) *events {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	return &events{
		broadcaster: b,
		recorder:    b.NewRecorder(runtime.NewScheme(), corev1.EventSource{Component: EventSource, Host: node}),
		node:        node,
		emitted:     map[types.UID]map[eventKey]bool{},
	}
}

func (e *events) shutdown() { e.broadcaster.Shutdown() }

// load remembers the pod events of this node's agent already in the API,
// so a restarted agent does not emit them again. Called once at start
// with the UIDs of the node's pods; events of other pods are ignored. The
// field selector (served by kube-apiserver and by dnsplane's) keeps the
// list to the agents' own pod events.
func (e *events) load(ctx context.Context, kube kubernetes.Interface, pods map[types.UID]bool) error {
	opts := metav1.ListOptions{Limit: 500, FieldSelector: fields.Set{
		"source": EventSource, "involvedObject.kind": "Pod",
	}.AsSelector().String()}
	for {
		list, err := kube.CoreV1().Events("").List(ctx, opts)
		if err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.Source.Component != EventSource || ev.Source.Host != e.node || !pods[ev.InvolvedObject.UID] {
				continue
			}
			e.mark(ev.InvolvedObject.UID, ev.Reason, ev.Message)
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}

func (e *events) mark(uid types.UID, reason, message string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.emitted[uid]
	if m == nil {
		m = map[eventKey]bool{}
		e.emitted[uid] = m
	}
	k := eventKey{reason, message}
	if m[k] {
		return false
	}
	m[k] = true
	return true
}

// warnOnce emits a Warning on the pod unless this one was emitted before.
func (e *events) warnOnce(ref *corev1.ObjectReference, reason, message string) {
	if e.mark(ref.UID, reason, message) {
		e.recorder.Event(ref, corev1.EventTypeWarning, reason, message)
	}
}

// forget drops what was emitted for a pod that is gone.
func (e *events) forget(uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.emitted, uid)
}

func podRef(namespace, name string, uid types.UID) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: name, UID: uid,
	}
}
