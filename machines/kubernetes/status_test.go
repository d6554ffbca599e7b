package kubernetes

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetkit/fleetkit/machines"
)

// podWith returns a Pod of this provider whose container has status cs.
func podWith(phase corev1.PodPhase, cs *corev1.ContainerStatus) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "m",
			Labels:      map[string]string{"lang": "python", machines.LabelPort: "8080"},
			Annotations: map[string]string{AnnotationCreated: "2026-11-25T10:00:00.123456789Z"},
		},
		Status: corev1.PodStatus{Phase: phase, PodIP: "10.244.0.9"},
	}
	if cs != nil {
		cs.Name = ContainerName
		p.Status.ContainerStatuses = []corev1.ContainerStatus{*cs}
	}
	return p
}

func TestState(t *testing.T) {
	oom := &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
	tests := []struct {
		name       string
		pod        *corev1.Pod
		wantState  machines.State
		wantReason string
	}{
		{"serving", podWith(corev1.PodRunning, &corev1.ContainerStatus{Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}), machines.StateRunning, ""},
		{"not ready", podWith(corev1.PodRunning, &corev1.ContainerStatus{
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}),
			machines.StateRunning, "NotReady: the readiness probe has not passed"},
		{"crash loop after an OOM kill", podWith(corev1.PodRunning, &corev1.ContainerStatus{RestartCount: 3,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: oom}}),
			machines.StateExited, "CrashLoopBackOff: back-off 40s restarting failed container (last exit: OOMKilled, exit code 137)"},
		{"image missing", podWith(corev1.PodPending, &corev1.ContainerStatus{
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "pull access denied"}}}),
			machines.StateExited, "ErrImagePull: pull access denied"},
		{"evicted", func() *corev1.Pod {
			p := podWith(corev1.PodFailed, &corev1.ContainerStatus{
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 143}}})
			p.Status.Reason, p.Status.Message = "Evicted", "The node was low on resource: memory."
			return p
		}(), machines.StateExited, "Evicted: The node was low on resource: memory."},
		{"unschedulable", func() *corev1.Pod {
			p := podWith(corev1.PodPending, nil)
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient cpu."}}
			return p
		}(), machines.StateExited, "Unschedulable: 0/1 nodes are available: 1 Insufficient cpu."},
		{"terminating", func() *corev1.Pod {
			p := podWith(corev1.PodRunning, &corev1.ContainerStatus{Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			return p
		}(), machines.StateExited, "Terminating"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := machineOf(tt.pod)
			assert.Equal(t, tt.wantState, m.State)
			assert.Equal(t, tt.wantReason, m.Reason)
			assert.Equal(t, "10.244.0.9:8080", m.Address)
			assert.Equal(t, "python", m.Labels["lang"])
			assert.Equal(t, 123456789, m.CreatedAt.Nanosecond(), "CreatedAt from the annotation, to the nanosecond")
		})
	}
}

func TestStartFailure(t *testing.T) {
	waiting := func(reason string) *corev1.Pod {
		return podWith(corev1.PodPending, &corev1.ContainerStatus{
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}})
	}
	tests := []struct {
		name                  string
		pod                   *corev1.Pod
		wantFailed, wantSpecs bool
	}{
		{"creating", waiting("ContainerCreating"), false, false},
		{"no container status yet", podWith(corev1.PodPending, nil), false, false},
		{"never pull", waiting("ErrImageNeverPull"), true, true},
		{"pull back-off", waiting("ImagePullBackOff"), true, true},
		{"config error", waiting("CreateContainerConfigError"), true, true},
		{"crash loop", waiting("CrashLoopBackOff"), true, false},
		{"exited", podWith(corev1.PodRunning, &corev1.ContainerStatus{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}), true, false},
		{"restarted", podWith(corev1.PodRunning, &corev1.ContainerStatus{RestartCount: 1,
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}), true, false},
		{"running, not ready", podWith(corev1.PodRunning, &corev1.ContainerStatus{
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failed, invalid, reason := startFailure(tt.pod)
			assert.Equal(t, tt.wantFailed, failed, reason)
			assert.Equal(t, tt.wantSpecs, invalid, reason)
		})
	}
}

func TestExitOf(t *testing.T) {
	running := podWith(corev1.PodRunning, &corev1.ContainerStatus{Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	exited := podWith(corev1.PodRunning, &corev1.ContainerStatus{
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}})
	restarted := podWith(corev1.PodRunning, &corev1.ContainerStatus{RestartCount: 1,
		State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}})
	evicted := podWith(corev1.PodFailed, nil)
	evicted.Status.Reason = "Evicted"

	code, reason, ok := exitOf(running, exited)
	assert.True(t, ok)
	assert.Equal(t, 3, code)
	assert.Equal(t, "Error, exit code 3", reason)

	_, _, ok = exitOf(exited, exited)
	assert.False(t, ok, "an exit is reported once")
	_, _, ok = exitOf(exited, restarted)
	assert.False(t, ok, "the restart of an exit already reported")

	code, reason, ok = exitOf(running, restarted)
	assert.True(t, ok, "a restart whose exit the informer did not see")
	assert.Equal(t, 137, code)
	assert.Equal(t, "restarted after OOMKilled, exit code 137", reason)

	code, reason, ok = exitOf(running, evicted)
	assert.True(t, ok)
	assert.Equal(t, -1, code)
	assert.Equal(t, "Evicted", reason)

	_, _, ok = exitOf(running, running)
	assert.False(t, ok)
}
