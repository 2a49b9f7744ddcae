package podexec

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Nobody is the user and group a command runs as when the pod's
// securityContext names none: the overflow uid and gid, which own nothing,
// so the command can read only what every user may (issue 22 item 3).
// Kubernetes would take the image's user; dnsplane runs no images.
const Nobody = 65534

// Identity is who a command runs as.
type Identity struct {
	UID, GID uint32
	// Groups are the supplementary groups: supplementalGroups and fsGroup,
	// as kubelet adds them.
	Groups []uint32
	// Privileged keeps the capabilities and privilege escalation of the
	// user: a container with securityContext.privileged. Anything else
	// runs with no capabilities and no_new_privs.
	Privileged bool
}

// IdentityOf is who a command in the pod's container runs as (the pod's
// first container when container is ""): runAsUser and runAsGroup of the
// container's securityContext over the pod's, as kubelet merges them
// (securitycontext.DetermineEffectiveSecurityContext), Nobody when neither
// sets them, root for a privileged container that sets no user. A
// runAsNonRoot that the user breaks is an error, as kubelet refuses to
// start such a container.
func IdentityOf(pod *corev1.Pod, container string) (Identity, error) {
	var sc *corev1.SecurityContext
	found := false
	for _, c := range pod.Spec.InitContainers {
		if c.Name == container {
			sc, found = c.SecurityContext, true
		}
	}
	for i, c := range pod.Spec.Containers {
		if c.Name == container || (container == "" && i == 0) {
			sc, found = c.SecurityContext, true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == container {
			sc, found = c.SecurityContext, true
		}
	}
	if !found && container != "" {
		return Identity{}, fmt.Errorf("container %s is not valid for pod %s", container, pod.Name)
	}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	id := Identity{UID: Nobody, GID: Nobody, Privileged: sc.Privileged != nil && *sc.Privileged}
	if id.Privileged {
		id.UID, id.GID = 0, 0
	}
	if u := firstInt64(sc.RunAsUser, psc.RunAsUser); u != nil {
		id.UID = uint32(*u) //nolint:gosec // validation keeps ids in 0..2^31-1
	}
	if g := firstInt64(sc.RunAsGroup, psc.RunAsGroup); g != nil {
		id.GID = uint32(*g) //nolint:gosec // as above
	}
	for _, g := range psc.SupplementalGroups {
		id.Groups = append(id.Groups, uint32(g)) //nolint:gosec // as above
	}
	if psc.FSGroup != nil {
		id.Groups = append(id.Groups, uint32(*psc.FSGroup)) //nolint:gosec // as above
	}
	nonRoot := sc.RunAsNonRoot
	if nonRoot == nil {
		nonRoot = psc.RunAsNonRoot
	}
	if nonRoot != nil && *nonRoot && id.UID == 0 {
		// kubelet's words (kuberuntime verifyRunAsNonRoot).
		return Identity{}, fmt.Errorf("container's runAsUser breaks non-root policy (pod: %s/%s, container: %s)", pod.Namespace, pod.Name, container)
	}
	return id, nil
}

func firstInt64(vs ...*int64) *int64 {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

// The subcommand's flags that carry an Identity.
const (
	userFlag       = "--user="
	groupsFlag     = "--groups="
	privilegedFlag = "--privileged"
)

// args are the subcommand's flags for id.
func (id Identity) args() []string {
	a := []string{fmt.Sprintf("%s%d:%d", userFlag, id.UID, id.GID)}
	if len(id.Groups) > 0 {
		gs := make([]string, len(id.Groups))
		for i, g := range id.Groups {
			gs[i] = strconv.FormatUint(uint64(g), 10)
		}
		a = append(a, groupsFlag+strings.Join(gs, ","))
	}
	if id.Privileged {
		a = append(a, privilegedFlag)
	}
	return a
}

// parseIdentityFlag sets the part of id that flag names; false when flag is
// not one of the identity flags.
func parseIdentityFlag(id *Identity, flag string) (bool, error) {
	switch {
	case flag == privilegedFlag:
		id.Privileged = true
	case strings.HasPrefix(flag, userFlag):
		u, g, ok := strings.Cut(strings.TrimPrefix(flag, userFlag), ":")
		if !ok {
			return true, fmt.Errorf("%s: want UID:GID", flag)
		}
		var err error
		if id.UID, err = parseID(u); err != nil {
			return true, fmt.Errorf("%s: %w", flag, err)
		}
		if id.GID, err = parseID(g); err != nil {
			return true, fmt.Errorf("%s: %w", flag, err)
		}
	case strings.HasPrefix(flag, groupsFlag):
		id.Groups = nil
		for _, s := range strings.Split(strings.TrimPrefix(flag, groupsFlag), ",") {
			g, err := parseID(s)
			if err != nil {
				return true, fmt.Errorf("%s: %w", flag, err)
			}
			id.Groups = append(id.Groups, g)
		}
	default:
		return false, nil
	}
	return true, nil
}

func parseID(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	// (uid_t)-1 means "leave unchanged" to setresuid(2).
	if err != nil || n == 1<<32-1 {
		return 0, fmt.Errorf("%q is not a user or group id", s)
	}
	return uint32(n), nil
}
