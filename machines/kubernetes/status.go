package kubernetes

import (
	"fmt"
	"maps"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/fleetkit/fleetkit/machines"
)

// machineOf returns what a Pod of this provider says of its machine.
func machineOf(pod *corev1.Pod) machines.Machine {
	m := machines.Machine{ID: pod.Name, Labels: maps.Clone(pod.Labels)}
	if pod.Status.PodIP != "" && pod.Labels[machines.LabelPort] != "" {
		m.Address = net.JoinHostPort(pod.Status.PodIP, pod.Labels[machines.LabelPort])
	}
	if t, err := time.Parse(time.RFC3339Nano, pod.Annotations[AnnotationCreated]); err == nil {
		m.CreatedAt = t
	} else {
		m.CreatedAt = pod.CreationTimestamp.Time
	}
	m.State, m.Reason = state(pod)
	return m
}

// container returns the status of the machine's container, or nil.
func container(pod *corev1.Pod) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == ContainerName {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// state says whether the Pod serves and, when something is wrong, why:
// the reasons the kubelet and the eviction manager give, so that callers
// see CrashLoopBackOff, OOMKilled, Evicted or ErrImagePull as such.
func state(pod *corev1.Pod) (machines.State, string) {
	if pod.DeletionTimestamp != nil {
		return machines.StateExited, "Terminating"
	}
	cs := container(pod)
	switch pod.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		reason := joinReason(pod.Status.Reason, pod.Status.Message)
		if reason == "" && cs != nil && cs.State.Terminated != nil {
			reason = terminated(cs.State.Terminated)
		}
		if reason == "" {
			reason = string(pod.Status.Phase)
		}
		return machines.StateExited, reason
	}
	if cs == nil {
		reason := "Pending"
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				reason = joinReason(c.Reason, c.Message)
			}
		}
		return machines.StateExited, reason
	}
	last := ""
	if t := cs.LastTerminationState.Terminated; t != nil {
		last = " (last exit: " + terminated(t) + ")"
	}
	switch {
	case cs.State.Waiting != nil:
		return machines.StateExited, joinReason(cs.State.Waiting.Reason, cs.State.Waiting.Message) + last
	case cs.State.Terminated != nil:
		return machines.StateExited, terminated(cs.State.Terminated)
	case cs.State.Running == nil:
		return machines.StateExited, "Pending"
	case !cs.Ready:
		return machines.StateRunning, "NotReady: the readiness probe has not passed" + last
	}
	return machines.StateRunning, ""
}

// terminated describes a container's end: "OOMKilled, exit code 137".
func terminated(t *corev1.ContainerStateTerminated) string {
	reason := t.Reason
	if reason == "" {
		reason = "Exited"
	}
	s := fmt.Sprintf("%s, exit code %d", reason, t.ExitCode)
	if t.Message != "" {
		s += ": " + strings.TrimSpace(t.Message)
	}
	return s
}

func joinReason(reason, message string) string {
	message = strings.TrimSpace(message)
	switch {
	case reason == "":
		return message
	case message == "":
		return reason
	}
	return reason + ": " + message
}

// startFailure reports whether a starting Pod will not get Ready by
// waiting: its image is missing, its spec does not fit its image, or its
// container exited. invalid says the spec is at fault.
func startFailure(pod *corev1.Pod) (failed, invalid bool, reason string) {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		_, reason := state(pod)
		return true, false, reason
	}
	cs := container(pod)
	if cs == nil {
		return false, false, ""
	}
	if w := cs.State.Waiting; w != nil {
		switch w.Reason {
		case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
			"CreateContainerConfigError", "CreateContainerError":
			return true, true, joinReason(w.Reason, w.Message)
		case "CrashLoopBackOff", "RunContainerError", "StartError":
			_, reason := state(pod)
			return true, false, reason
		}
	}
	if cs.State.Terminated != nil {
		return true, false, terminated(cs.State.Terminated)
	}
	if t := cs.LastTerminationState.Terminated; t != nil && cs.RestartCount > 0 {
		return true, false, "restarted after " + terminated(t)
	}
	return false, false, ""
}

// exitOf returns the exit of the Pod's container that the update from old
// to pod shows, if it shows one: the container terminated, or it was
// restarted (the informer may not have seen it terminated in between), or
// the Pod failed (evicted: its reason wins over the container's).
func exitOf(old, pod *corev1.Pod) (code int, reason string, ok bool) {
	cs, ocs := container(pod), container(old)
	oldTerminated := ocs != nil && ocs.State.Terminated != nil
	code = -1
	switch {
	case cs != nil && cs.State.Terminated != nil && !oldTerminated:
		code, reason, ok = int(cs.State.Terminated.ExitCode), terminated(cs.State.Terminated), true
	case cs != nil && ocs != nil && cs.RestartCount > ocs.RestartCount && !oldTerminated:
		reason, ok = "restarted", true
		if t := cs.LastTerminationState.Terminated; t != nil {
			code, reason = int(t.ExitCode), "restarted after "+terminated(t)
		}
	}
	if pod.Status.Phase == corev1.PodFailed && old.Status.Phase != corev1.PodFailed {
		if r := joinReason(pod.Status.Reason, pod.Status.Message); r != "" {
			reason = r
		}
		ok = ok || !oldTerminated
		if reason == "" {
			reason = "Failed"
		}
	}
	return code, reason, ok
}
