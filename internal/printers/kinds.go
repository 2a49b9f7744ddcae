package printers

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	dpoperatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// byKind holds the kind-specific printers, built on first use: only the
// API server prints tables, and every dnsplane process (the cluster DNS and
// node cache included) would otherwise build them at start
// (docs/operations.md, "Memory of the data plane").
var byKind = sync.OnceValue(buildPrinters)

func buildPrinters() map[schema.GroupKind]Printer {
	core := func(kind string) schema.GroupKind { return schema.GroupKind{Kind: kind} }
	apps := func(kind string) schema.GroupKind { return schema.GroupKind{Group: "apps", Kind: kind} }
	batch := func(kind string) schema.GroupKind { return schema.GroupKind{Group: "batch", Kind: kind} }
	return map[schema.GroupKind]Printer{
		core("Pod"):                   podPrinter(),
		core("PodTemplate"):           podTemplatePrinter(),
		core("ReplicationController"): replicationControllerPrinter(),
		core("Service"):               servicePrinter(),
		core("Endpoints"):             endpointsPrinter(),
		core("Node"):                  nodePrinter(),
		core("Event"):                 eventPrinter(),
		core("Namespace"):             namespacePrinter(),
		core("Secret"):                secretPrinter(),
		core("ServiceAccount"):        serviceAccountPrinter(),
		core("PersistentVolume"):      persistentVolumePrinter(),
		core("PersistentVolumeClaim"): persistentVolumeClaimPrinter(),
		core("ResourceQuota"):         resourceQuotaPrinter(),
		core("LimitRange"):            limitRangePrinter(),
		apps("ControllerRevision"):    controllerRevisionPrinter(),
		pdbKind:                       podDisruptionBudgetPrinter(),
		priorityClassKind:             priorityClassPrinter(),
		hpaKind:                       horizontalPodAutoscalerPrinter(),
		ingressKind:                   ingressPrinter(),
		ingressClassKind:              ingressClassPrinter(),
		networkPolicyKind:             networkPolicyPrinter(),
		serviceCIDRKind:               serviceCIDRPrinter(),
		ipAddressKind:                 ipAddressPrinter(),
		csrKind:                       certificateSigningRequestPrinter(),
		podCertificateRequestKind:     podCertificateRequestPrinter(),
		clusterTrustBundleKind:        clusterTrustBundlePrinter(),
		vapKind:                       validatingAdmissionPolicyPrinter(),
		vapbKind:                      validatingAdmissionPolicyBindingPrinter(),
		svmKind:                       storageVersionMigrationPrinter(),
		core("ConfigMap"):             configMapPrinter(),
		apps("Deployment"):            deploymentPrinter(),
		apps("ReplicaSet"):            replicaSetPrinter(),
		apps("StatefulSet"):           statefulSetPrinter(),
		apps("DaemonSet"):             daemonSetPrinter(),
		batch("Job"):                  jobPrinter(),
		batch("CronJob"):              cronJobPrinter(),
		{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: endpointSlicePrinter(),
		{Group: "coordination.k8s.io", Kind: "Lease"}:      leasePrinter(),
		storageKind("StorageClass"):                        storageClassPrinter(),
		storageKind("CSINode"):                             csiNodePrinter(),
		storageKind("CSIDriver"):                           csiDriverPrinter(),
		storageKind("CSIStorageCapacity"):                  csiStorageCapacityPrinter(),
		storageKind("VolumeAttachment"):                    volumeAttachmentPrinter(),
		storageKind("VolumeAttributesClass"):               volumeAttributesClassPrinter(),
		rbacKind("Role"):                                   rolePrinter(),
		rbacKind("ClusterRole"):                            clusterRolePrinter(),
		rbacKind("RoleBinding"):                            roleBindingPrinter(),
		rbacKind("ClusterRoleBinding"):                     clusterRoleBindingPrinter(),
		resourceKind("DeviceClass"):                        deviceClassPrinter(),
		resourceKind("ResourceClaim"):                      resourceClaimPrinter(),
		resourceKind("ResourceClaimTemplate"):              resourceClaimTemplatePrinter(),
		resourceKind("ResourceSlice"):                      resourceSlicePrinter(),
		resourceKind("DeviceTaintRule"):                    deviceTaintRulePrinter(),
		{Group: "events.k8s.io", Kind: "Event"}:            eventsV1Printer(),
		{Group: dpoperatorv1.GroupName, Kind: "DNS"}:       dnsPrinter(),
	}
}

// --- pods ---

func podPrinter() Printer {
	p := newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
			colPlain("Status", "string", "The aggregate status of the containers in this pod."),
			colPlain("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
			colAge(),
			colWide("IP", "string", corev1.PodStatus{}.SwaggerDoc()["podIP"]),
			colWide("Node", "string", corev1.PodSpec{}.SwaggerDoc()["nodeName"]),
			colWide("Nominated Node", "string", corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]),
			colWide("Readiness Gates", "string", corev1.PodSpec{}.SwaggerDoc()["readinessGates"]),
		},
		podCells,
	)
	p.conditions = func(obj any) []metav1.TableRowCondition {
		pod, ok := obj.(*dpcorev1.Pod)
		if !ok {
			return nil
		}
		switch pod.Status.Phase {
		case corev1.PodSucceeded:
			return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
		case corev1.PodFailed:
			return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
		}
		return nil
	}
	return p
}

// podRestarts accumulates restart counts and the latest termination.
type printPodRestarts struct {
	count int
	last  time.Time
}

func (r *printPodRestarts) add(cs *corev1.ContainerStatus) {
	r.count += int(cs.RestartCount)
	if t := cs.LastTerminationState.Terminated; t != nil && t.FinishedAt.After(r.last) {
		r.last = t.FinishedAt.Time
	}
}

// exitReason names a terminated container without a reason.
func printExitReason(prefix string, t *corev1.ContainerStateTerminated) string {
	if t.Signal != 0 {
		return fmt.Sprintf("%sSignal:%d", prefix, t.Signal)
	}
	return fmt.Sprintf("%sExitCode:%d", prefix, t.ExitCode)
}

func printPodCondition(st *corev1.PodStatus, t corev1.PodConditionType) bool {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podCells computes READY, STATUS and RESTARTS the way kubectl users know
// them: init containers first (a failing or pending one decides STATUS),
// then the app containers, the last one listed taking precedence.
func podCells(pod *dpcorev1.Pod, now time.Time) []any {
	spec, st := &pod.Spec.PodSpec, &pod.Status
	reason := string(st.Phase)
	if st.Reason != "" {
		reason = st.Reason
	}
	for _, c := range st.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	total, ready := len(spec.Containers), 0
	sidecar := map[string]bool{} // init containers with restartPolicy Always
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecar[c.Name] = true
			total++
		}
	}

	var all, sidecars printPodRestarts
	initializing := false
	for i := range st.InitContainerStatuses {
		cs := &st.InitContainerStatuses[i]
		all.add(cs)
		if sidecar[cs.Name] {
			sidecars.add(cs)
		}
		term, wait := cs.State.Terminated, cs.State.Waiting
		if term != nil && term.ExitCode == 0 {
			continue
		}
		if sidecar[cs.Name] && cs.Started != nil && *cs.Started {
			if cs.Ready {
				ready++
			}
			continue
		}
		switch {
		case term != nil && term.Reason != "":
			reason = "Init:" + term.Reason
		case term != nil:
			reason = printExitReason("Init:", term)
		case wait != nil && wait.Reason != "" && wait.Reason != "PodInitializing":
			reason = "Init:" + wait.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(spec.InitContainers))
		}
		initializing = true
		break
	}

	restarts := all
	if !initializing || printPodCondition(st, corev1.PodInitialized) {
		restarts = sidecars
		running := false
		for i := len(st.ContainerStatuses) - 1; i >= 0; i-- {
			cs := &st.ContainerStatuses[i]
			restarts.add(cs)
			switch s := cs.State; {
			case s.Waiting != nil && s.Waiting.Reason != "":
				reason = s.Waiting.Reason
			case s.Terminated != nil && s.Terminated.Reason != "":
				reason = s.Terminated.Reason
			case s.Terminated != nil:
				reason = printExitReason("", s.Terminated)
			case cs.Ready && s.Running != nil:
				running = true
				ready++
			}
		}
		// A completed container next to a running one: report the pod.
		if reason == "Completed" && running {
			reason = "NotReady"
			if printPodCondition(st, corev1.PodReady) {
				reason = "Running"
			}
		}
	}

	if pod.DeletionTimestamp != nil {
		switch {
		case st.Reason == "NodeLost":
			reason = "Unknown"
		case st.Phase != corev1.PodSucceeded && st.Phase != corev1.PodFailed:
			reason = "Terminating"
		}
	}

	restartCell := strconv.Itoa(restarts.count)
	if restarts.count != 0 && !restarts.last.IsZero() {
		restartCell = fmt.Sprintf("%d (%s ago)", restarts.count, duration.HumanDuration(now.Sub(restarts.last)))
	}

	ip := "<none>"
	if len(st.PodIPs) > 0 && st.PodIPs[0].IP != "" {
		ip = st.PodIPs[0].IP
	} else if st.PodIP != "" {
		ip = st.PodIP
	}
	gates := "<none>"
	if n := len(spec.ReadinessGates); n > 0 {
		met := 0
		for _, g := range spec.ReadinessGates {
			if printPodCondition(st, g.ConditionType) {
				met++
			}
		}
		gates = fmt.Sprintf("%d/%d", met, n)
	}
	return []any{
		pod.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartCell, cellAge(pod.CreationTimestamp, now),
		ip, cellOrNone(spec.NodeName), cellOrNone(st.NominatedNodeName), gates,
	}
}

// --- pod templates and their carriers ---

func podTemplatePrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Containers", "string", printContainersDesc),
			colPlain("Images", "string", printImagesDesc),
			colPlain("Pod Labels", "string", "The labels for the pod template."),
		},
		func(o *dpcorev1.PodTemplate, now time.Time) []any {
			names, images := cellContainers(o.Template.Spec.Containers)
			return []any{o.Name, names, images, labels.FormatLabels(o.Template.Labels)}
		},
	)
}

func replicationControllerPrinter() Printer {
	spec, status := corev1.ReplicationControllerSpec{}.SwaggerDoc(), corev1.ReplicationControllerStatus{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Desired", "integer", spec["replicas"]),
			colPlain("Current", "integer", status["replicas"]),
			colPlain("Ready", "integer", status["readyReplicas"]),
			colAge(),
			colWide("Containers", "string", printContainersDesc),
			colWide("Images", "string", printImagesDesc),
			colWide("Selector", "string", spec["selector"]),
		},
		func(o *dpcorev1.ReplicationController, now time.Time) []any {
			var containers []corev1.Container
			if o.Spec.Template != nil {
				containers = o.Spec.Template.Spec.Containers
			}
			names, images := cellContainers(containers)
			return []any{o.Name, cellReplicas(o.Spec.Replicas), int64(o.Status.Replicas), int64(o.Status.ReadyReplicas),
				cellAge(o.CreationTimestamp, now), names, images, labels.FormatLabels(o.Spec.Selector)}
		},
	)
}

func deploymentPrinter() Printer {
	status := appsv1.DeploymentStatus{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Ready", "string", "Number of the pod with ready state"),
			colPlain("Up-to-date", "string", status["updatedReplicas"]),
			colPlain("Available", "string", status["availableReplicas"]),
			colAge(),
			colWide("Containers", "string", printContainersDesc),
			colWide("Images", "string", printImagesDesc),
			colWide("Selector", "string", appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]),
		},
		func(o *dpappsv1.Deployment, now time.Time) []any {
			names, images := cellContainers(o.Spec.Template.Spec.Containers)
			selector := "<invalid>"
			if s, err := metav1.LabelSelectorAsSelector(o.Spec.Selector); err == nil {
				selector = s.String()
			}
			return []any{o.Name, fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, cellReplicas(o.Spec.Replicas)),
				int64(o.Status.UpdatedReplicas), int64(o.Status.AvailableReplicas), cellAge(o.CreationTimestamp, now),
				names, images, selector}
		},
	)
}

func replicaSetPrinter() Printer {
	spec, status := appsv1.ReplicaSetSpec{}.SwaggerDoc(), appsv1.ReplicaSetStatus{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Desired", "integer", spec["replicas"]),
			colPlain("Current", "integer", status["replicas"]),
			colPlain("Ready", "integer", status["readyReplicas"]),
			colAge(),
			colWide("Containers", "string", printContainersDesc),
			colWide("Images", "string", printImagesDesc),
			colWide("Selector", "string", spec["selector"]),
		},
		func(o *dpappsv1.ReplicaSet, now time.Time) []any {
			names, images := cellContainers(o.Spec.Template.Spec.Containers)
			return []any{o.Name, cellReplicas(o.Spec.Replicas), int64(o.Status.Replicas), int64(o.Status.ReadyReplicas),
				cellAge(o.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(o.Spec.Selector)}
		},
	)
}

func statefulSetPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Ready", "string", "Number of the pod with ready state"),
			colAge(),
			colWide("Containers", "string", printContainersDesc),
			colWide("Images", "string", printImagesDesc),
		},
		func(o *dpappsv1.StatefulSet, now time.Time) []any {
			names, images := cellContainers(o.Spec.Template.Spec.Containers)
			return []any{o.Name, fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, cellReplicas(o.Spec.Replicas)),
				cellAge(o.CreationTimestamp, now), names, images}
		},
	)
}

func daemonSetPrinter() Printer {
	status := appsv1.DaemonSetStatus{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Desired", "integer", status["desiredNumberScheduled"]),
			colPlain("Current", "integer", status["currentNumberScheduled"]),
			colPlain("Ready", "integer", status["numberReady"]),
			colPlain("Up-to-date", "integer", status["updatedNumberScheduled"]),
			colPlain("Available", "integer", status["numberAvailable"]),
			colPlain("Node Selector", "string", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]),
			colAge(),
			colWide("Containers", "string", printContainersDesc),
			colWide("Images", "string", printImagesDesc),
			colWide("Selector", "string", appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]),
		},
		func(o *dpappsv1.DaemonSet, now time.Time) []any {
			s := o.Status
			names, images := cellContainers(o.Spec.Template.Spec.Containers)
			return []any{o.Name, int64(s.DesiredNumberScheduled), int64(s.CurrentNumberScheduled), int64(s.NumberReady),
				int64(s.UpdatedNumberScheduled), int64(s.NumberAvailable), labels.FormatLabels(o.Spec.Template.Spec.NodeSelector),
				cellAge(o.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(o.Spec.Selector)}
		},
	)
}

func jobPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Status", "string", "Status of the job."),
			colPlain("Completions", "string", batchv1.JobStatus{}.SwaggerDoc()["succeeded"]),
			colPlain("Duration", "string", "Time required to complete the job."),
			colAge(),
			colWide("Containers", "string", printContainersDesc),
			colWide("Images", "string", printImagesDesc),
			colWide("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]),
		},
		func(o *dpbatchv1.Job, now time.Time) []any {
			names, images := cellContainers(o.Spec.Template.Spec.Containers)
			return []any{o.Name, printJobStatus(o), printJobCompletions(o), printJobDuration(o, now), cellAge(o.CreationTimestamp, now),
				names, images, metav1.FormatLabelSelector(o.Spec.Selector)}
		},
	)
}

func printJobCompletions(o *dpbatchv1.Job) string {
	if o.Spec.Completions != nil {
		return fmt.Sprintf("%d/%d", o.Status.Succeeded, *o.Spec.Completions)
	}
	if o.Spec.Parallelism != nil && *o.Spec.Parallelism > 1 {
		return fmt.Sprintf("%d/1 of %d", o.Status.Succeeded, *o.Spec.Parallelism)
	}
	return fmt.Sprintf("%d/1", o.Status.Succeeded)
}

func printJobDuration(o *dpbatchv1.Job, now time.Time) string {
	switch {
	case o.Status.StartTime == nil:
		return ""
	case o.Status.CompletionTime == nil:
		return duration.HumanDuration(now.Sub(o.Status.StartTime.Time))
	default:
		return duration.HumanDuration(o.Status.CompletionTime.Sub(o.Status.StartTime.Time))
	}
}

func printJobStatus(o *dpbatchv1.Job) string {
	has := func(t batchv1.JobConditionType) bool {
		for _, c := range o.Status.Conditions {
			if c.Type == t {
				return c.Status == corev1.ConditionTrue
			}
		}
		return false
	}
	switch {
	case has(batchv1.JobComplete):
		return "Complete"
	case has(batchv1.JobFailed):
		return "Failed"
	case o.DeletionTimestamp != nil:
		return "Terminating"
	case has(batchv1.JobSuspended):
		return "Suspended"
	case has(batchv1.JobFailureTarget):
		return "FailureTarget"
	}
	return "Running"
}

func cronJobPrinter() Printer {
	spec, status := batchv1.CronJobSpec{}.SwaggerDoc(), batchv1.CronJobStatus{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Schedule", "string", spec["schedule"]),
			colPlain("Timezone", "string", spec["timeZone"]),
			colPlain("Suspend", "boolean", spec["suspend"]),
			colPlain("Active", "integer", status["active"]),
			colPlain("Last Schedule", "string", status["lastScheduleTime"]),
			colAge(),
			colWide("Containers", "string", printContainersDesc),
			colWide("Images", "string", printImagesDesc),
			colWide("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]),
		},
		func(o *dpbatchv1.CronJob, now time.Time) []any {
			last := "<none>"
			if o.Status.LastScheduleTime != nil {
				last = cellAge(*o.Status.LastScheduleTime, now)
			}
			tz := "<none>"
			if o.Spec.TimeZone != nil {
				tz = *o.Spec.TimeZone
			}
			suspend := "<unset>"
			if o.Spec.Suspend != nil {
				suspend = cellBool(*o.Spec.Suspend)
			}
			job := &o.Spec.JobTemplate.Spec
			names, images := cellContainers(job.Template.Spec.Containers)
			return []any{o.Name, o.Spec.Schedule, tz, suspend, int64(len(o.Status.Active)), last,
				cellAge(o.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(job.Selector)}
		},
	)
}

// --- services and endpoints ---

func servicePrinter() Printer {
	spec := corev1.ServiceSpec{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Type", "string", spec["type"]),
			colPlain("Cluster-IP", "string", spec["clusterIP"]),
			colPlain("External-IP", "string", spec["externalIPs"]),
			colPlain("Port(s)", "string", spec["ports"]),
			colAge(),
			colWide("Selector", "string", spec["selector"]),
		},
		func(o *corev1.Service, now time.Time) []any {
			typ := o.Spec.Type
			if typ == "" {
				typ = corev1.ServiceTypeClusterIP // the API default
			}
			clusterIP := "<none>"
			if len(o.Spec.ClusterIPs) > 0 {
				clusterIP = o.Spec.ClusterIPs[0]
			} else if o.Spec.ClusterIP != "" {
				clusterIP = o.Spec.ClusterIP
			}
			ports := make([]string, 0, len(o.Spec.Ports))
			for _, p := range o.Spec.Ports {
				proto := p.Protocol
				if proto == "" {
					proto = corev1.ProtocolTCP
				}
				if p.NodePort > 0 {
					ports = append(ports, fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, proto))
				} else {
					ports = append(ports, fmt.Sprintf("%d/%s", p.Port, proto))
				}
			}
			portCell := strings.Join(ports, ",")
			if portCell == "" {
				portCell = "<none>"
			}
			return []any{o.Name, string(typ), clusterIP, printServiceExternalIP(o, typ), portCell,
				cellAge(o.CreationTimestamp, now), labels.FormatLabels(o.Spec.Selector)}
		},
	)
}

func printServiceExternalIP(o *corev1.Service, typ corev1.ServiceType) string {
	switch typ {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(o.Spec.ExternalIPs) > 0 {
			return strings.Join(o.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		seen := map[string]bool{}
		var lb []string
		for _, in := range o.Status.LoadBalancer.Ingress {
			addr := in.IP
			if addr == "" {
				addr = in.Hostname
			}
			if addr != "" && !seen[addr] {
				seen[addr] = true
				lb = append(lb, addr)
			}
		}
		sort.Strings(lb)
		all := append(lb, o.Spec.ExternalIPs...)
		if len(all) == 0 {
			return "<pending>"
		}
		return strings.Join(all, ",")
	case corev1.ServiceTypeExternalName:
		return o.Spec.ExternalName
	}
	return "<unknown>"
}

//nolint:staticcheck // Endpoints is deprecated in favour of EndpointSlice, but kube-apiserver still serves it, and so do we.
func endpointsPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Endpoints", "string", corev1.Endpoints{}.SwaggerDoc()["subsets"]),
			colAge(),
		},
		func(o *corev1.Endpoints, now time.Time) []any {
			return []any{o.Name, printEndpoints(o.Subsets), cellAge(o.CreationTimestamp, now)}
		},
	)
}

// endpointsCell lists up to three ip:port pairs and counts the rest.
//
//nolint:staticcheck // as above: the Endpoints kind is served as kube-apiserver serves it.
func printEndpoints(subsets []corev1.EndpointSubset) string {
	if len(subsets) == 0 {
		return "<none>"
	}
	var list printLimitedList
	for _, ss := range subsets {
		if len(ss.Ports) == 0 {
			// Headless services may have no ports.
			for _, a := range ss.Addresses {
				list.add(a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			for _, a := range ss.Addresses {
				list.add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	return list.String("")
}

func endpointSlicePrinter() Printer {
	doc := discoveryv1.EndpointSlice{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("AddressType", "string", doc["addressType"]),
			colPlain("Ports", "string", doc["ports"]),
			colPlain("Endpoints", "string", doc["endpoints"]),
			colAge(),
		},
		func(o *discoveryv1.EndpointSlice, now time.Time) []any {
			var ports, addrs printLimitedList
			for _, p := range o.Ports {
				switch {
				case p.Port != nil:
					ports.add(strconv.Itoa(int(*p.Port)))
				case p.Name != nil:
					ports.add(*p.Name)
				default:
					ports.add("*")
				}
			}
			for _, e := range o.Endpoints {
				for _, a := range e.Addresses {
					addrs.add(a)
				}
			}
			return []any{o.Name, string(o.AddressType), ports.String("<unset>"), addrs.String("<unset>"), cellAge(o.CreationTimestamp, now)}
		},
	)
}

// limitedList keeps the first three entries and counts all of them.
type printLimitedList struct {
	items []string
	count int
}

const printLimitedListMax = 3

func (l *printLimitedList) add(s string) {
	if len(l.items) < printLimitedListMax {
		l.items = append(l.items, s)
	}
	l.count++
}

// String joins the kept entries, "a,b,c + 2 more...", or empty when there
// are none.
func (l *printLimitedList) String(empty string) string {
	out := strings.Join(l.items, ",")
	if l.count > printLimitedListMax {
		return fmt.Sprintf("%s + %d more...", out, l.count-printLimitedListMax)
	}
	if out == "" {
		return empty
	}
	return out
}

// --- cluster objects ---

func nodePrinter() Printer {
	info, status := corev1.NodeSystemInfo{}.SwaggerDoc(), corev1.NodeStatus{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Status", "string", "The status of the node"),
			colPlain("Roles", "string", "The roles of the node"),
			colAge(),
			colPlain("Version", "string", info["kubeletVersion"]),
			colWide("Internal-IP", "string", status["addresses"]),
			colWide("External-IP", "string", status["addresses"]),
			colWide("OS-Image", "string", info["osImage"]),
			colWide("Kernel-Version", "string", info["kernelVersion"]),
			colWide("Container-Runtime", "string", info["containerRuntimeVersion"]),
		},
		func(o *corev1.Node, now time.Time) []any {
			state := "Unknown"
			for _, c := range o.Status.Conditions {
				if c.Type == corev1.NodeReady {
					state = "NotReady"
					if c.Status == corev1.ConditionTrue {
						state = "Ready"
					}
					break
				}
			}
			if o.Spec.Unschedulable {
				state += ",SchedulingDisabled"
			}
			ni := o.Status.NodeInfo
			return []any{o.Name, state, printNodeRoles(o.Labels), cellAge(o.CreationTimestamp, now), ni.KubeletVersion,
				printNodeAddress(o, corev1.NodeInternalIP), printNodeAddress(o, corev1.NodeExternalIP),
				cellOrUnknown(ni.OSImage), cellOrUnknown(ni.KernelVersion), cellOrUnknown(ni.ContainerRuntimeVersion)}
		},
	)
}

// nodeRoles reads node-role.kubernetes.io/<role> label keys and the value
// of kubernetes.io/role.
func printNodeRoles(l map[string]string) string {
	set := map[string]bool{}
	for k, v := range l {
		if role, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && role != "" {
			set[role] = true
		} else if k == "kubernetes.io/role" && v != "" {
			set[v] = true
		}
	}
	if len(set) == 0 {
		return "<none>"
	}
	roles := make([]string, 0, len(set))
	for r := range set {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return strings.Join(roles, ",")
}

func printNodeAddress(o *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range o.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func namespacePrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{colName(), colPlain("Status", "string", "The status of the namespace"), colAge()},
		func(o *corev1.Namespace, now time.Time) []any {
			phase := string(o.Status.Phase)
			if phase == "" {
				phase = string(corev1.NamespaceActive)
			}
			return []any{o.Name, phase, cellAge(o.CreationTimestamp, now)}
		},
	)
}

func eventPrinter() Printer { return newPrinter(eventColumns(), eventCells) }

// eventsV1Printer prints events.k8s.io/v1 Events with the columns of v1
// Events: kube-apiserver serves both views from one storage, whose table
// convertor prints the internal core.Event
// (k8s.io/kubernetes/pkg/printers/internalversion, printEvent). The
// object is converted with upstream's conversion, as there.
func eventsV1Printer() Printer {
	return Printer{
		columns: eventColumns(),
		cells: func(obj any, now time.Time) ([]any, error) {
			o, ok := obj.(*eventsv1.Event)
			if !ok || o == nil {
				return nil, fmt.Errorf("cannot print %T as %T", obj, (*eventsv1.Event)(nil))
			}
			var e corev1.Event
			if err := upstream.ConvertVersion(o, &e, schema.GroupKind{Kind: "Event"}); err != nil {
				return nil, fmt.Errorf("printing an events.k8s.io/v1 Event: %w", err)
			}
			return eventCells(&e, now), nil
		},
	}
}

func eventColumns() []metav1.TableColumnDefinition {
	doc := corev1.Event{}.SwaggerDoc()
	return []metav1.TableColumnDefinition{
		colPlain("Last Seen", "string", doc["lastTimestamp"]),
		colPlain("Type", "string", doc["type"]),
		colPlain("Reason", "string", doc["reason"]),
		colPlain("Object", "string", doc["involvedObject"]),
		colWide("Subobject", "string", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]),
		colWide("Source", "string", doc["source"]),
		colPlain("Message", "string", doc["message"]),
		colWide("First Seen", "string", doc["firstTimestamp"]),
		colWide("Count", "string", doc["count"]),
		{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: objectMetaDoc["name"]},
	}
}

func eventCells(o *corev1.Event, now time.Time) []any {
	first := cellAge(o.FirstTimestamp, now)
	if o.FirstTimestamp.IsZero() {
		first = cellAgeMicro(o.EventTime, now)
	}
	last := cellAge(o.LastTimestamp, now)
	if o.LastTimestamp.IsZero() {
		last = first
	}
	count := o.Count
	if o.Series != nil {
		last = cellAgeMicro(o.Series.LastObservedTime, now)
		count = o.Series.Count
	} else if count == 0 {
		count = 1 // singleton events of the events.k8s.io API
	}
	target := strings.ToLower(o.InvolvedObject.Kind)
	if o.InvolvedObject.Name != "" {
		target += "/" + o.InvolvedObject.Name
	}
	component := cellFirstNonEmpty(o.Source.Component, o.ReportingController)
	source := component
	if instance := cellFirstNonEmpty(o.Source.Host, o.ReportingInstance); instance != "" {
		source = component + ", " + instance
	}
	return []any{last, o.Type, o.Reason, target, o.InvolvedObject.FieldPath, source,
		strings.TrimSpace(o.Message), first, int64(count), o.Name}
}

func configMapPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{colName(), colPlain("Data", "string", corev1.ConfigMap{}.SwaggerDoc()["data"]), colAge()},
		func(o *corev1.ConfigMap, now time.Time) []any {
			return []any{o.Name, int64(len(o.Data) + len(o.BinaryData)), cellAge(o.CreationTimestamp, now)}
		},
	)
}

func secretPrinter() Printer {
	doc := corev1.Secret{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{colName(), colPlain("Type", "string", doc["type"]), colPlain("Data", "string", doc["data"]), colAge()},
		func(o *corev1.Secret, now time.Time) []any {
			typ := o.Type
			if typ == "" {
				typ = corev1.SecretTypeOpaque // the API default
			}
			return []any{o.Name, string(typ), int64(len(o.Data)), cellAge(o.CreationTimestamp, now)}
		},
	)
}

func serviceAccountPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{colName(), colPlain("Secrets", "string", corev1.ServiceAccount{}.SwaggerDoc()["secrets"]), colAge()},
		func(o *corev1.ServiceAccount, now time.Time) []any {
			return []any{o.Name, int64(len(o.Secrets)), cellAge(o.CreationTimestamp, now)}
		},
	)
}

func leasePrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{colName(), colPlain("Holder", "string", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]), colAge()},
		func(o *coordinationv1.Lease, now time.Time) []any {
			holder := ""
			if o.Spec.HolderIdentity != nil {
				holder = *o.Spec.HolderIdentity
			}
			return []any{o.Name, holder, cellAge(o.CreationTimestamp, now)}
		},
	)
}

// dnsPrinter prints operator.dnsplane.io DNS objects.
func dnsPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Cluster-IP", "string", "The service IP of cluster DNS."),
			colPlain("Cluster-Domain", "string", "The cluster domain cluster DNS serves."),
			colPlain("Available", "string", "Status of the Available condition."),
			colAge(),
		},
		func(o *dpoperatorv1.DNS, now time.Time) []any {
			available := "Unknown"
			for _, c := range o.Status.Conditions {
				if c.Type == "Available" {
					available = string(c.Status)
					break
				}
			}
			return []any{o.Name, cellOrNone(o.Status.ClusterIP), cellOrNone(o.Status.ClusterDomain), available, cellAge(o.CreationTimestamp, now)}
		},
	)
}

// --- small cell helpers ---

// containerCells joins container names and images with commas.
func cellContainers(cs []corev1.Container) (names, images string) {
	n, i := make([]string, len(cs)), make([]string, len(cs))
	for k, c := range cs {
		n[k], i[k] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

// replicas is spec.replicas with the API default of 1 when unset.
func cellReplicas(r *int32) int64 {
	if r == nil {
		return 1
	}
	return int64(*r)
}

func cellBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func cellOrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func cellOrUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

func cellFirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
