package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/kubernetes/pkg/controller/cronjob"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/disruption"
	"k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/replication"
	"k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/kubernetes/pkg/controller/ttlafterfinished"
)

// workloadDescriptors are the controllers that turn workloads into pods.
// Pods made from a template with dnsPolicy Custom keep their dnsParams
// through them (docs/pod-dns.md, "dnsParams and controllers").
func workloadDescriptors() []Descriptor {
	return []Descriptor{
		{Name: "deployment-controller", Why: "rolls Deployments out through ReplicaSets", New: newDeploymentController},
		{Name: "replicaset-controller", Why: "keeps a ReplicaSet's pods at its replicas", New: newReplicaSetController},
		{Name: "replicationcontroller-controller", Why: "keeps a ReplicationController's pods at its replicas", New: newReplicationController},
		{Name: "statefulset-controller", Why: "creates a StatefulSet's pods in order with stable names (web-0.web.<ns>.svc)", New: newStatefulSetController},
		{Name: "daemonset-controller", Why: "puts a DaemonSet's pod on every node that fits", New: newDaemonSetController},
		{Name: "job-controller", Why: "creates a Job's pods; with no container running, they never complete (docs/controllers.md, \"Jobs\")", New: newJobController},
		{Name: "cronjob-controller", Why: "creates Jobs on a CronJob's schedule", New: newCronJobController},
		{Name: "ttl-after-finished-controller", Why: "deletes finished Jobs after ttlSecondsAfterFinished", New: newTTLAfterFinishedController},
		{Name: "disruption-controller", Why: "keeps PodDisruptionBudgets' status, which pods/eviction (kubectl drain) checks", New: newDisruptionController},
	}
}

func newDeploymentController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("deployment-controller")
	if err != nil {
		return nil, err
	}
	dc, err := deployment.NewDeploymentController(ctx, c.Informers.Apps().V1().Deployments(), c.Informers.Apps().V1().ReplicaSets(),
		c.Informers.Core().V1().Pods(), client)
	if err != nil {
		return nil, fmt.Errorf("deployment controller: %w", err)
	}
	workers := int(c.ComponentConfig.DeploymentController.ConcurrentDeploymentSyncs)
	return func(ctx context.Context) { dc.Run(ctx, workers) }, nil
}

func newReplicaSetController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("replicaset-controller")
	if err != nil {
		return nil, err
	}
	rsc := replicaset.NewReplicaSetController(ctx, c.Informers.Apps().V1().ReplicaSets(), c.Informers.Core().V1().Pods(),
		client, replicaset.BurstReplicas)
	workers := int(c.ComponentConfig.ReplicaSetController.ConcurrentRSSyncs)
	return func(ctx context.Context) { rsc.Run(ctx, workers) }, nil
}

func newReplicationController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("replication-controller")
	if err != nil {
		return nil, err
	}
	rm := replication.NewReplicationManager(ctx, c.Informers.Core().V1().Pods(), c.Informers.Core().V1().ReplicationControllers(),
		client, replication.BurstReplicas)
	workers := int(c.ComponentConfig.ReplicationController.ConcurrentRCSyncs)
	return func(ctx context.Context) { rm.Run(ctx, workers) }, nil
}

func newStatefulSetController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("statefulset-controller")
	if err != nil {
		return nil, err
	}
	ssc := statefulset.NewStatefulSetController(ctx, c.Informers.Core().V1().Pods(), c.Informers.Apps().V1().StatefulSets(),
		c.Informers.Core().V1().PersistentVolumeClaims(), c.Informers.Apps().V1().ControllerRevisions(), client)
	workers := int(c.ComponentConfig.StatefulSetController.ConcurrentStatefulSetSyncs)
	return func(ctx context.Context) { ssc.Run(ctx, workers) }, nil
}

func newDaemonSetController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("daemon-set-controller")
	if err != nil {
		return nil, err
	}
	dsc, err := daemon.NewDaemonSetsController(ctx, c.Informers.Apps().V1().DaemonSets(), c.Informers.Apps().V1().ControllerRevisions(),
		c.Informers.Core().V1().Pods(), c.Informers.Core().V1().Nodes(), client, flowcontrol.NewBackOff(time.Second, 15*time.Minute))
	if err != nil {
		return nil, fmt.Errorf("daemonset controller: %w", err)
	}
	workers := int(c.ComponentConfig.DaemonSetController.ConcurrentDaemonSetSyncs)
	return func(ctx context.Context) { dsc.Run(ctx, workers) }, nil
}

// newJobController is kube-controller-manager's without the Workload and
// PodGroup informers, which only the WorkloadWithJob feature (alpha, off)
// reads.
func newJobController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("job-controller")
	if err != nil {
		return nil, err
	}
	jc, err := job.NewController(ctx, client, c.Informers.Core().V1().Pods(), c.Informers.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("job controller: %w", err)
	}
	workers := int(c.ComponentConfig.JobController.ConcurrentJobSyncs)
	return func(ctx context.Context) { jc.Run(ctx, workers) }, nil
}

func newCronJobController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("cronjob-controller")
	if err != nil {
		return nil, err
	}
	cjc, err := cronjob.NewControllerV2(ctx, c.Informers.Batch().V1().Jobs(), c.Informers.Batch().V1().CronJobs(), client)
	if err != nil {
		return nil, fmt.Errorf("cronjob controller: %w", err)
	}
	workers := int(c.ComponentConfig.CronJobController.ConcurrentCronJobSyncs)
	return func(ctx context.Context) { cjc.Run(ctx, workers) }, nil
}

func newTTLAfterFinishedController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("ttl-after-finished-controller")
	if err != nil {
		return nil, err
	}
	tc := ttlafterfinished.New(ctx, c.Informers.Batch().V1().Jobs(), client)
	workers := int(c.ComponentConfig.TTLAfterFinishedController.ConcurrentTTLSyncs)
	return func(ctx context.Context) { tc.Run(ctx, workers) }, nil
}

// newDisruptionController is kube-controller-manager's: the scale
// subresource through discovery for PDBs over custom workloads.
func newDisruptionController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("disruption-controller")
	if err != nil {
		return nil, err
	}
	scaleCfg, err := c.NewConfig("disruption-controller")
	if err != nil {
		return nil, err
	}
	scales, err := scale.NewForConfig(scaleCfg, c.RESTMapper, dynamic.LegacyAPIPathResolverFunc,
		scale.NewDiscoveryScaleKindResolver(client.Discovery()))
	if err != nil {
		return nil, fmt.Errorf("disruption controller scale client: %w", err)
	}
	dc := disruption.NewDisruptionController(ctx, c.Informers.Core().V1().Pods(), c.Informers.Policy().V1().PodDisruptionBudgets(),
		c.Informers.Core().V1().ReplicationControllers(), c.Informers.Apps().V1().ReplicaSets(), c.Informers.Apps().V1().Deployments(),
		c.Informers.Apps().V1().StatefulSets(), client, c.RESTMapper, scales, client.Discovery())
	workers := int(c.ComponentConfig.DisruptionController.ConcurrentDisruptionSyncs)
	return func(ctx context.Context) { dc.Run(ctx, workers) }, nil
}
