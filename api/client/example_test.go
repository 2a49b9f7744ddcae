package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	"github.com/dnsplane/dnsplane/api/client/informers/externalversions"
)

// The example of docs/client.md, kept here so that it compiles. It has no
// Output comment, so go test builds it but does not run it (it needs a
// server).
func Example() {
	home, err := os.UserHomeDir()
	if err != nil {
		log.Fatal(err)
	}
	// The admin kubeconfig `dnsplane up` writes.
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(home, ".dnsplane", "kubeconfig"))
	if err != nil {
		log.Fatal(err)
	}
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// Read, change, write back: spec.dnsParams is part of the Pod type, so
	// the update keeps it.
	pods := cs.CoreV1().Pods("default")
	pod, err := pods.Get(ctx, "custom-pod", metav1.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	pod.Annotations = map[string]string{"reviewed": "yes"}
	if pod, err = pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(pod.Spec.DNSPolicy, pod.Spec.DNSParams.Custom.Search)

	// A shared informer and its lister: the cache holds dnsplane Pods.
	factory := externalversions.NewSharedInformerFactory(cs, 0)
	lister := factory.Core().V1().Pods().Lister()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	all, err := lister.Pods("default").List(labels.Everything())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range all {
		fmt.Println(p.Name, p.Spec.DNSParams != nil)
	}
}
